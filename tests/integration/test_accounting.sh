#!/usr/bin/env bash
# Endings Slurm has forgotten: clusters of their own with MinJobAge=5 s, where `mlsup tick` submits
# and is not run again until slurmctld has purged the ended job (it purges about once a minute).
# With accounting (slurmdbd backed by MariaDB): a crash is resumed, a person's scancel stops the
# campaign (12) with nothing resubmitted, a completion without target.steps is not rerun. Without
# accounting: the script's end record decides; with no source at all (the batch shell killed by
# SIGKILL, which leaves no end record) a job that ran is waited for until its heartbeat shows it gone,
# then submitted again (class forgotten) and carried on from its checkpoint to an uninterrupted run's
# result; without heartbeats to show that, the campaign is held (15) and nothing is submitted, until a
# person's `mlsup resume` lets the ticks carry it on the same way.
set -uo pipefail
# A hard limit on the whole suite: SIGTERM runs the EXIT trap, which stops both clusters.
[ -n "${MLSUP_ACCT_SUITE:-}" ] || exec timeout -k 30 420 env MLSUP_ACCT_SUITE=1 bash "$0" "$@"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/campaign_lib.sh"

T=$(mktemp -d /tmp/mlsup-acct.XXXXXX)
chmod 0755 "$T"
ACCT="$T/acct" PLAIN="$T/plain"
trap 'for d in "$ACCT" "$PLAIN"; do "$REPO/tests/cluster/cluster.sh" stop --dir "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
start_cluster() {  # start_cluster DIR [--accounting]; prints its slurm.conf
  local line
  line=$("$REPO/tests/cluster/cluster.sh" start --dir "$1" --nodes 2 --min-job-age 5 "${@:2}" 2>"$1.log") || {
    cat "$1.log"; echo "FAILED: the cluster in $1 did not start"; echo "0 passed, 1 failed"; exit 1; }
  echo "${line#SLURM_CONF=}"
}
t0=$(date +%s)
A_CONF=$(start_cluster "$ACCT" --accounting)
echo "cluster with accounting up in $(( $(date +%s) - t0 ))s"
t0=$(date +%s)
P_CONF=$(start_cluster "$PLAIN")
echo "cluster without accounting up in $(( $(date +%s) - t0 ))s"

# A campaign named NAME on the cluster of slurm.conf CONF, whose batch script runs BODY.
declare -A CONF_OF CLUSTER_OF
campaign() {
  local name=$1 cluster=$2 body=$3 dir="$T/$1"
  mkdir -p "$dir"
  printf '#!/bin/bash\n#SBATCH --nodes=1\n%s\n' "$body" >"$dir/job.sbatch"
  cat >"$dir/campaign.yaml" <<YAML
name: $name
template: $dir/job.sbatch
slurm: {nodes: 1, time: "00:05:00", signal_lead: 30s}
heartbeat: {startup_timeout: 10m}
policy: {backoff_initial: 1s, backoff_max: 1s}
poll_interval: 1s
YAML
  CONF_OF[$name]="$dir/campaign.yaml" CLUSTER_OF[$name]=$cluster
}
# A campaign of the test trainer (NAME, its cluster's slurm.conf, the trainer's arguments, its heartbeat
# mapping) through the shipped srun template, checkpoints in its folder's ckpt/.
trainer_campaign() {
  local name=$1 cluster=$2 args=$3 heartbeat=$4 dir="$T/$1"
  mkdir -p "$dir"
  cat >"$dir/campaign.yaml" <<YAML
name: $name
template: $REPO/templates/srun.sbatch.tmpl
vars: {script: $TRAINER, script_args: $args}
slurm: {nodes: 1, ntasks_per_node: 1, time: "00:05:00", signal_lead: 30s}
checkpoint: {dir: $dir/ckpt, layout: glob, complete_marker: COMPLETE}
heartbeat: $heartbeat
policy: {backoff_initial: 1s, backoff_max: 1s}
poll_interval: 1s
YAML
  CONF_OF[$name]="$dir/campaign.yaml" CLUSTER_OF[$name]=$cluster
}
on() { local name=$1; shift; CONF=${CONF_OF[$name]} SLURM_CONF=${CLUSTER_OF[$name]} "$@"; }
tick() { on "$1" timeout -s KILL 60 "$MLSUP" tick "${CONF_OF[$1]}" >>"$T/$1/tick.out" 2>&1; }
job() { on "$1" attempt_field "${2:-1}" job_id; }
state_of() { on "$1" job_state "$(job "$1" "${2:-1}")"; }
running() { [ "$(state_of "$1")" = RUNNING ]; }
forgotten() { ! on "$1" scontrol show job "$(job "$1")" >/dev/null 2>&1; }
all_forgotten() { local n; for n in "$@"; do forgotten "$n" || return 1; done; }
ended_event() { on "$1" event_count attempt-ended "${@:2}"; }

campaign crash "$A_CONF" 'sleep 2; exit 1'
campaign cancel "$A_CONF" 'sleep 600'
campaign complete "$A_CONF" 'sleep 1'
campaign record "$P_CONF" 'sleep 1'
UNKNOWN_ARGS="--steps 200 --step-seconds 0.05 --ckpt-every 20 --nonce 0e0d0015"
trainer_campaign unknown "$P_CONF" "$UNKNOWN_ARGS" "{startup_timeout: 15s, steady_timeout: 15s, calibrate: false}"
trainer_campaign held "$P_CONF" "$UNKNOWN_ARGS" "{enabled: false}"
complete_checkpoints() { ls "$T/$1"/ckpt/*/COMPLETE 2>/dev/null | wc -l; }
two_checkpoints() { [ "$(complete_checkpoints unknown)" -ge 2 ] && [ "$(complete_checkpoints held)" -ge 2 ]; }
NAMES=(crash cancel complete record unknown held)

scenario "each campaign's first tick submits its job; the jobs end (one by a person's scancel) and no tick sees it"
for n in "${NAMES[@]}"; do tick "$n"; done
check "every campaign submitted one job" test "$(for n in "${NAMES[@]}"; do job "$n"; done | grep -c .)" -eq 6
wait_until 60 running cancel
on cancel scancel "$(job cancel)"
# The trainer's batch shell is SIGKILLed once it has saved two checkpoints: no end record is written.
wait_until 90 two_checkpoints
check "the trainer saved checkpoints before its batch shell is killed" two_checkpoints
pkill -9 -f "spool/[^/]*/job0*$(job unknown)/slurm_script"
pkill -9 -f "spool/[^/]*/job0*$(job held)/slurm_script"
wait_until 150 all_forgotten "${NAMES[@]}"
check "slurmctld forgot every job (MinJobAge 5 s and its purge)" all_forgotten "${NAMES[@]}"
scenario_done

scenario "the next ticks, with accounting"
for n in crash cancel complete; do tick "$n"; echo "tick of $n exited $?"; done
sleep 2
for n in crash cancel complete; do tick "$n"; echo "tick of $n exited $?"; done
check "crash: classed failed from accounting" test "$(ended_event crash class=failed end_source=accounting exit_code=1)" -eq 1
check "crash: the next attempt was submitted" test -n "$(job crash 2)"
check "person's scancel: classed cancelled from accounting" test "$(ended_event cancel class=cancelled end_source=accounting)" -eq 1
check "person's scancel: the campaign stopped with 12" test "$(on cancel status_field exit_code)" = 12
check "person's scancel: nothing resubmitted" test "$(on cancel sbatch_count)" -eq 1
check "completion without target.steps: completed from accounting" test "$(ended_event complete class=completed end_source=accounting)" -eq 1
check "completion: the campaign is done (0), not rerun" test "$(on complete status_field exit_code):$(on complete sbatch_count)" = "0:1"
scenario_done

scenario "mlsup plan: a campaign with no failure reads the cluster's node failures from accounting"
# The plan's inputs.mtbf of campaign NAME (through CONFIG, default its own), printed, and whether EXPR (Python,
# over m) holds of it: plan_mtbf NAME CONFIG EXPR.
plan_mtbf() {
  local out="$T/$1/plan.json"
  on "$1" timeout -s KILL 30 "$MLSUP" plan "$2" --json >"$out" 2>"$out.err"
  /usr/bin/python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["inputs"]["mtbf"]; print(json.dumps(m)); sys.exit(0 if eval(sys.argv[2]) else 1)' "$out" "$3"
}
# The same config on the command-line backend (the same state folder: the config's own folder and name).
sed 's/^slurm: {/slurm: {backend: cli, /' "${CONF_OF[complete]}" >"$T/complete/cli.yaml"
# The suite's jobs so far ended in seconds each (the crash's ran 2 s); none ended NODE_FAIL: the history is read
# and not used (the campaign's own figure stays, a lower bound or none).
HAD='m.get("node_seconds", 0) > 0 and m.get("node_failures") == 0 and "accounting_error" not in m and m["source"] != "accounting"'
check "plan (libslurm): the history's node-seconds and no node failure; the campaign's figure stays" \
  plan_mtbf complete "${CONF_OF[complete]}" "$HAD"
check "plan (cli: sacct -a): the same" plan_mtbf complete "$T/complete/cli.yaml" "$HAD"
check "plan with a failure in the journal (crash): the campaign's MTBF, accounting not asked" \
  plan_mtbf crash "${CONF_OF[crash]}" 'm["source"] == "campaign" and not m["lower_bound"] and "node_seconds" not in m'
check "plan without accounting: accounting_error says why" \
  plan_mtbf record "${CONF_OF[record]}" 'm.get("accounting_error") == "the site keeps no accounting" and m["lower_bound"]'
scenario_done

scenario "the next ticks, without accounting"
declare -A TICK_RC
for n in record unknown held; do tick "$n"; TICK_RC[$n]=$?; echo "tick of $n exited ${TICK_RC[$n]}"; done
sleep 2
for n in record unknown held; do tick "$n"; TICK_RC[$n]=$?; echo "tick of $n exited ${TICK_RC[$n]}"; done
check "end record: completed from the script's end record" test "$(ended_event record class=completed end_source=end_record)" -eq 1
check "end record: the campaign is done (0), not rerun" test "$(on record status_field exit_code):$(on record sbatch_count)" = "0:1"
check "no source, it ran: waited for until its heartbeat shows it gone (told once)" test "$(on unknown event_count forgotten-waiting)" -eq 1
check "no source, it ran: nothing resubmitted yet" test "$(on unknown sbatch_count)" -eq 1
check "no source, no heartbeats: classed end_unknown" test "$(ended_event held class=end_unknown)" -eq 1
check "no source, no heartbeats: the campaign is held with 15, an alerted stop" test "$(on held event_count stopped exit_code=15 alert=true)" -eq 1
check "no source, no heartbeats: nothing resubmitted" test "$(on held sbatch_count)" -eq 1
check "no source, no heartbeats: the tick exits 15" test "${TICK_RC[held]}" -eq 15
check "no source, no heartbeats: the journal's attempt 1 is classed end_unknown" test "$(on held attempt_field 1 class)" = end_unknown
check "no source, no heartbeats: status says the campaign stopped with 15" test "$(on held status_field exit_code)" = 15
scenario_done

# Ticks every 2 s until campaign NAME has completed (or LIMIT seconds passed); the last tick's code in TICK_RC.
tick_to_the_end() {
  local name=$1 limit=$2 t1; t1=$(date +%s)
  done_yet() { [ "$(on "$name" status_field exit_code)" = 0 ]; }
  while ! done_yet && [ $(( $(date +%s) - t1 )) -lt "$limit" ]; do tick "$name"; TICK_RC[$name]=$?; sleep 2; done
  echo "ticks of $name: $(( $(date +%s) - t1 ))s, the last exited ${TICK_RC[$name]}"
}

# The attempt after the forgotten one completed from a checkpoint of attempt 1, with an uninterrupted
# run's result: checks_carried_on NAME WHY.
checks_carried_on() {
  local name=$1 why=$2 expected result
  check "$why: the last tick exits 0: the campaign completed" test "${TICK_RC[$name]}" -eq 0
  check "$why: status says the campaign completed (0)" test "$(on "$name" status_field exit_code)" = 0
  check "$why: one more job was submitted, no more" test "$(on "$name" sbatch_count)" -eq 2
  check "$why: attempt 2 completed" test "$(on "$name" attempt_field 2 class)" = completed
  check "$why: attempt 2 resumed from a checkpoint of attempt 1" test -n "$(on "$name" attempt_field 2 resume_from)"
  expected=$(/usr/bin/python3 "$TRAINER" --expected-result $UNKNOWN_ARGS)
  result=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["chain"])' \
    "$T/$name/.mlsup/$name/result.json" 2>/dev/null)
  check "$why: the result equals an uninterrupted run's" test -n "$result" -a "$result" = "$expected"
}

scenario "the job that ran, its heartbeat silent past its timeout: submitted again by itself, carried on to an uninterrupted run's result"
tick_to_the_end unknown 120
check "no source, it ran: classed forgotten, resubmitted" test "$(ended_event unknown class=forgotten action=resubmit)" -eq 1
checks_carried_on unknown "no source, it ran"
scenario_done

scenario "a person resumes the held campaign; the ticks carry it on to an uninterrupted run's result"
on held timeout -s KILL 60 "$MLSUP" resume "${CONF_OF[held]}" >"$T/held/resume.out" 2>&1
rc=$?
cat "$T/held/resume.out"
check "mlsup resume exits 0" test "$rc" -eq 0
tick_to_the_end held 120
checks_carried_on held "resumed by a person"
scenario_done

on crash scancel "$(job crash 2)" 2>/dev/null
finish
