#!/usr/bin/env bash
# `mlsup check`, the dead-man, on the live cluster, and the shipped ways to drive mlsup
# (examples/cron/): each condition check reports is provoked for real and its exit code and status
# line checked (a job cancelled behind mlsup's back while no supervisor runs, supervision overdue, a
# nearly full checkpoint file system: a 2 MiB tmpfs when this runs as root and may mount, else the
# real disk with thresholds below its use); the crontab line's command is run as cron would run it
# and stays quiet when nothing happened; the systemd units pass `systemd-analyze verify` (or, without
# it, a parse check of their own); the self-rescheduling sbatch job ticks a campaign to its end through
# its own copies, never with more than one waiting, and stops when cancelled.
# Reads SLURM_CONF, MLSUP (the binary), MLSUP_SOURCE_DIR.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"
EXAMPLES="$REPO/examples/cron"

# Runs `mlsup check ARGS...`, prints its line and exit code, and checks both: the code is RC and the
# line matches the extended regular expression PATTERN. check_says "what" RC PATTERN ARGS...
check_says() {
  local what=$1 rc=$2 pattern=$3; shift 3
  local out got
  out=$(timeout -s KILL 60 "$MLSUP" check "$@" 2>&1); got=$?
  echo "  mlsup check $*: exit $got: $out"
  check "$what (exit $rc)" bash -c "[ $got -eq $rc ] && [ \$(printf '%s\n' \"\$1\" | wc -l) -eq 1 ] && [[ \"\$1\" =~ \$2 ]]" _ "$out" "$pattern"
}

# The crontab line's command run as cron runs it: sh -c, cron's environment (HOME, LOGNAME, SHELL, the
# file's PATH), with the built mlsup's folder put first on that PATH. cron_tick OUTFILE; sets CRON_RC.
cron_tick() {
  local cmd path
  cmd=$(grep -E '^[*0-9]' "$EXAMPLES/crontab" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }')
  path=$(sed -n 's/^PATH=//p' "$EXAMPLES/crontab")
  env -i HOME="$CRON_HOME" LOGNAME="$(id -un)" SHELL=/bin/sh PATH="$(dirname "$MLSUP"):$path" SLURM_CONF="$SLURM_CONF" \
    timeout -s KILL 60 sh -c "$cmd" > "$1" 2>&1
  CRON_RC=$?
}

# True when Slurm shows job $1 in state $2.
in_state() { [ "$(job_state "$1")" = "$2" ]; }
# True once a supervisor holds the campaign (status --json's "supervisor" is not null).
supervised() { [ -n "$(status_query 's.get("supervisor")')" ]; }

scenario "crontab's command ticks a campaign (quiet when nothing happened); check: OK, stale supervision, a held lease, a nearly full disk, a job cancelled behind mlsup's back"
disk=$(mktemp -d /tmp/mlsup-e2e-checkdisk.XXXXXX)
if mount -t tmpfs -o size=2m tmpfs "$disk" 2>/dev/null; then DISK_MODE=tmpfs; else DISK_MODE=thresholds; fi
echo "nearly full file system: $DISK_MODE"
CKPT_DIR="$disk/ckpt" new_campaign check "--steps 2000 --step-seconds 0.25"
mkdir -p "$disk/ckpt"
CRON_HOME=$(mktemp -d /tmp/mlsup-e2e-cronhome.XXXXXX)
ln -s "$CDIR" "$CRON_HOME/campaigns"
CONF="$CRON_HOME/campaigns/campaign.yaml"  # the path cron's tick takes: a campaign's state folder is beside it
echo "crontab command: $(grep -E '^[*0-9]' "$EXAMPLES/crontab")"
cron_tick "$CDIR/tick1.out"
echo "first tick: exit $CRON_RC: $(cat "$CDIR/tick1.out")"
check "cron: the crontab line's command ran a tick that submitted attempt 1" bash -c "[ $CRON_RC -eq 0 ] && grep -q submitted '$CDIR/tick1.out'"
JOB=$(status_field job_id)
wait_until 60 in_state "$JOB" RUNNING
cron_tick "$CDIR/tick2.out"
check "cron: a tick in which nothing happened printed nothing, exit 0" bash -c "[ $CRON_RC -eq 0 ] && [ ! -s '$CDIR/tick2.out' ]"
check_says "check: a running job, just ticked, is OK" 0 "^MLSUP OK - 1 campaign: 1 running$" "$CONF"
sleep 4.5  # since the last tick's pass: 5-6 s, a margin both ways on a loaded machine
check_says "check: no pass for longer than --stale-after warns" 1 \
  "^MLSUP WARNING - $CNAME: no supervisor has passed for [0-9]s \(expected within 4s\)$" --stale-after 4s "$CONF"
check_says "check: no pass for over twice --stale-after is critical" 2 \
  "^MLSUP CRITICAL - $CNAME: no supervisor has passed for [0-9]+s \(expected within 2s\)$" --stale-after 2s "$CRON_HOME/campaigns"
start_campaign
wait_until 30 supervised
sleep 2
check_says "check: a campaign whose lease a running supervisor holds is never stale" 0 "^MLSUP OK - " --stale-after 1s "$CONF"
kill -TERM "$RUNNER"; wait_campaign 60
check "run: SIGTERM ends supervising (exit 6), the job runs on" bash -c "[ $RC -eq 6 ] && [ \"\$(scontrol -o show job $JOB | grep -o 'JobState=[A-Z]*')\" = JobState=RUNNING ]"
if [ "$DISK_MODE" = tmpfs ]; then
  fill() {  # fill PERCENT: the tmpfs used to about PERCENT
    local total used
    read -r total used < <(df -B1 --output=size,used "$disk" | tail -n 1)
    dd if=/dev/zero of="$disk/filler.$1" bs=1024 count=$(( (total * $1 / 100 - used) / 1024 )) 2>/dev/null
  }
  fill 85; echo "  $(df -h --output=pcent,target "$disk" | tail -n 1)"
  check_says "check: a checkpoint file system 85% full warns" 1 "^MLSUP WARNING - $CNAME: checkpoint file system 8[0-9]% full at $disk/ckpt$" "$CONF"
  cron_tick "$CDIR/tick-disk1.out"; cron_tick "$CDIR/tick-disk2.out"
  echo "  a tick: $(head -n 1 "$CDIR/tick-disk1.out")"
  check "disk alert: the supervisor's tick tells the rise (disk-nearly-full), the next tick nothing" \
    bash -c "grep -q 'disk-nearly-full: checkpoint file system 8[0-9]% full' '$CDIR/tick-disk1.out' && [ ! -s '$CDIR/tick-disk2.out' ]"
  fill 97; echo "  $(df -h --output=pcent,target "$disk" | tail -n 1)"
  check_says "check: one 97% full is critical" 2 "^MLSUP CRITICAL - $CNAME: checkpoint file system 9[5-9]% full at $disk/ckpt$" "$CONF"
  check_says "check: --disk-critical moves the critical threshold" 1 "^MLSUP WARNING - $CNAME: checkpoint file system 9[5-9]% full" \
    --disk-critical 99.5 "$CONF"
  rm -f "$disk"/filler.*
else
  used=$(df --output=pcent "$disk" | tail -n 1 | tr -dc 0-9)
  [ "$used" -ge 2 ] || used=2
  check_says "check: a checkpoint file system past --disk-warning warns" 1 "^MLSUP WARNING - $CNAME: checkpoint file system [0-9]+% full at " \
    --disk-warning $((used - 1)) "$CONF"
  check_says "check: past --disk-critical is critical" 2 "^MLSUP CRITICAL - $CNAME: checkpoint file system [0-9]+% full at " \
    --disk-warning $((used - 2)) --disk-critical $((used - 1)) "$CONF"
fi
scancel "$JOB"
wait_until 30 in_state "$JOB" CANCELLED
check_says "check: a job cancelled behind mlsup's back while no supervisor runs is critical" 2 \
  "^MLSUP CRITICAL - $CNAME: not running nor queued \(job $JOB of attempt 1 CANCELLED, no supervisor has followed it up\)$" "$CONF"
cron_tick "$CDIR/tick3.out"
echo "the next tick: exit $CRON_RC: $(tail -n 1 "$CDIR/tick3.out")"
check "cron: the next tick follows the cancel up (stopped: cancelled by a person, exit 12)" [ "$CRON_RC" -eq 12 ]
check_says "check: a stopped campaign is not expected to run" 0 "^MLSUP OK - 1 campaign: 1 stopped$" "$CONF"
check_says "check: a config that does not load is UNKNOWN" 3 "^MLSUP UNKNOWN - .*nowhere.yaml" "$CDIR/nowhere.yaml"
check_says "check: a --stale-after it cannot read is UNKNOWN" 3 "^MLSUP UNKNOWN - --stale-after: \"soon\" is not a duration" --stale-after soon "$CONF"
"$MLSUP" check --disk-warning 200 "$CONF" > /dev/null 2>&1; rc=$?
check "check: a wrong command line exits 3 (UNKNOWN), not mlsup's usage code" [ "$rc" -eq 3 ]
[ "$DISK_MODE" = tmpfs ] && umount "$disk"
rm -rf "$disk" "$CRON_HOME"
scenario_done

scenario "the systemd user units pass systemd-analyze verify"
units=(mlsup-run.service mlsup-tick.service mlsup-tick.timer)
if command -v systemd-analyze > /dev/null; then
  # verify looks for the programs the units run in a root of its own: one with systemd's own units and
  # a stand-in in /usr/bin for each program an Exec line names (only that it is there is checked).
  root=$(mktemp -d /tmp/mlsup-e2e-sdroot.XXXXXX)
  mkdir -p "$root/usr/bin" "$root/usr/lib/systemd" "$root/etc/systemd/system"
  for program in $(sed -n 's/^Exec[A-Za-z]*=\([^ ]*\).*/\1/p' "${units[@]/#/$EXAMPLES/}" | sort -u); do
    printf '#!/bin/sh\n' > "$root/usr/bin/$program"; chmod +x "$root/usr/bin/$program"
  done
  cp -r /usr/lib/systemd/system "$root/usr/lib/systemd/"
  for u in "${units[@]}"; do cp "$EXAMPLES/$u" "$root/etc/systemd/system/"; done
  for u in "${units[@]}"; do
    out=$(cd "$root" && systemd-analyze verify --root="$root" "$u" 2>&1); rc=$?
    echo "  systemd-analyze verify $u: exit $rc${out:+: $out}"
    check "systemd: $u verifies without a word" bash -c "[ $rc -eq 0 ] && [ -z \"\$1\" ]" _ "$out"
  done
  rm -rf "$root"
else
  echo "systemd-analyze is not installed: a parse check of mlsup's own instead"
  for u in "${units[@]}"; do
    check "systemd: $u is sections and Key=value lines" bash -c "! grep -vE '^(#.*|\[(Unit|Service|Timer|Install)\]|[A-Za-z]+=.*|)$' '$EXAMPLES/$u'"
  done
fi
check "systemd: the timer starts the tick service (same name)" [ -f "$EXAMPLES/mlsup-tick.service" ]
scenario_done

scenario "the self-rescheduling sbatch job ticks a campaign to its end through its own copies, one waiting at most; cancelled, it stops"
new_campaign chain "--steps 20 --step-seconds 0.25"
CHAIN="mlsup-tick-$$"
# The tick takes 2 s more here, so each copy's --begin has passed when the singleton dependency frees
# it: Slurm starts a job whose begin time passes while nothing else happens only at its next periodic
# scheduling (up to a minute on a quiet cluster), which would make this test slow, not wrong. The
# stand-in also notes which job ticked.
printf '#!/bin/sh\necho "$SLURM_JOB_ID" >> "%s/ticked"\n"%s" "$@"; rc=$?; sleep 2; exit $rc\n' "$CDIR" "$MLSUP" > "$CDIR/mlsup"
chmod +x "$CDIR/mlsup"
by_hand=""
for _ in 1 2; do  # a second sbatch by mistake must not make a second chain
  by_hand+=$(cd "$CDIR" && MLSUP="$CDIR/mlsup" MLSUP_TICK_EVERY=1 MLSUP_CAMPAIGNS="$CONF" \
    sbatch --parsable --job-name="$CHAIN" --dependency=singleton "$EXAMPLES/mlsup-tick.sbatch")$'\n'
done
# The ticks made by copies the job submitted itself.
resubmitted_ticks() { sort -u "$CDIR/ticked" 2>/dev/null | grep -cvxF -f <(grep . <<< "$by_hand"); }
max_pending=0 max_running=0 started=0 deadline=$(( $(date +%s) + 90 ))
until { [ "$(status_field state)" = completed ] && [ "$(resubmitted_ticks)" -ge 2 ]; } || [ "$(date +%s)" -ge "$deadline" ]; do
  q=$(squeue --noheader --name="$CHAIN" --format='%i %T')
  p=$(grep -c PENDING <<< "$q"); r=$(grep -c RUNNING <<< "$q")
  [ "$r" -gt 0 ] && started=1
  [ "$started" -eq 1 ] && [ "$p" -gt "$max_pending" ] && max_pending=$p  # once a copy ran: the two submitted merged
  [ "$r" -gt "$max_running" ] && max_running=$r
  sleep 0.5
done
echo "campaign: $(status_field state) after $(( $(date +%s) - SCENARIO_T0 ))s; jobs that ticked: $(sort -u "$CDIR/ticked" | tr '\n' ' ')(by hand: $(tr '\n' ' ' <<< "$by_hand")); at most $max_pending pending once one ran, $max_running running"
echo "the chain's output: $(tr '\n' '|' < "$CDIR/mlsup-tick.out")"
check "sbatch chain: the campaign completed" [ "$(status_field state)" = completed ]
check "sbatch chain: copies the job submitted itself ticked twice or more" [ "$(resubmitted_ticks)" -ge 2 ]
check "sbatch chain: its output holds the ticks that did something (submitted, then completed)" \
  bash -c "grep -q submitted '$CDIR/mlsup-tick.out' && grep -q completed '$CDIR/mlsup-tick.out'"
check "sbatch chain: never two copies running" [ "$max_running" -le 1 ]
check "sbatch chain: once a copy ran, never more than one waiting (the mistaken second sbatch added none)" [ "$max_pending" -le 1 ]
scancel --name="$CHAIN"
check "sbatch chain: scancel --name ends it (no copy left)" \
  wait_until 30 bash -c "[ -z \"\$(squeue --noheader --name='$CHAIN' --states=PENDING,RUNNING,CONFIGURING --format=%i)\" ]"
scenario_done

scancel --user="$(id -un)" 2>/dev/null
finish
