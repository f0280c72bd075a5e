#!/usr/bin/env bash
# Whether a long checkpoint save is kept through each way mlsup ends or pauses a running training, and
# what it costs in time: one campaign per case, one node, the test trainer (steps of 0.1 s, no
# periodic checkpoint) whose every save takes --save-seconds (90 by default: longer than
# policy.stop_grace, 1m, left at its default as is every other policy; so no save was measured
# before the first, and the grace is not stretched to twice the slowest), `mlsup run` holding it:
#   cancel     `mlsup cancel` once the training steps: the kill switch asks for a save and the exit;
#              the job is to be cancelled after the grace, never while its heartbeat says `saving`
#   pausenow   `mlsup pause --now`, the same way; the campaign is paused, not stopped
#   window     the end of the campaign's `window:` (UTC, whole minutes: it closes at the next minute
#              at least 30 s + the lead below away, and opens again 18 h later) with a save under way:
#              `mlsup save` starts one max(1, S/4) s before the close, which then asks through the
#              kill switch for another save and the exit
#   timelimit  Slurm's time limit, slurm.signal_lead: auto, slurm.time the whole minutes, at least 3,
#              whose half is at least the save + 30 s (4 for 90 s saves; --time M sets it) and
#              target.steps out of reach: attempt 1 has the configured lead (5m, at most half the
#              limit), attempt 2 the one sized from attempt 1's measured save (1.5 x (save + step) +
#              60 s, at most half the limit). A plain `mlsup pause` once attempt 2 runs (a running job
#              goes on) keeps a third from starting. One row per attempt: each limit is one save.
# A row per case: the newest complete checkpoint's step before the save was asked or started ("-":
# none; timelimit: the step the attempt resumed from) and at the job's end (the attempt-ended
# event's), whether the save was kept (after > before), the `cancelling` events mlsup logged (a job it
# cancelled: mid-save when not kept), the seconds from t0 (the verb; the window's end; the job's time
# limit, negative: the job ended before it) to the job's end (Slurm's EndTime, whole seconds), what
# mlsup decided at that end (the attempt-ended event's action), `mlsup run`'s exit code and the case's
# wall time. A campaign that did not end by itself (pausenow and timelimit: paused; window: waiting
# for the opening) is then cancelled to end the run (exit 16), with no job left to cancel. Each row
# is followed by a note: how the attempts ended, the leads, the campaign's state once the job ended,
# the saves mlsup measured. mlsup's state is read through `mlsup status --json` and `mlsup events --json` only,
# Slurm's through scontrol. Each case runs under a hard limit (timeout -s KILL) and prints its wall
# time. About 14 minutes with 90 s saves (the time limit case alone 7), 5 with 4 s saves.
#   benchmarks/long-save.sh [--save-seconds S] [--cases LIST] [--time M]
# --cases: comma-separated, from cancel, pausenow, window, timelimit (default: all, in that order).
# MLSUP picks the binary (default build/mlsup); MLSUP_BENCH_KEEP=1 keeps the runs' folders. Uses
# the cluster named by SLURM_CONF, or starts (and stops) a private one of 2 nodes in TMPDIR (/tmp).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source benchmarks/lib.sh
save=90 cases=cancel,pausenow,window,timelimit minutes=""
usage() { echo "usage: $0 [--save-seconds S] [--cases LIST] [--time MINUTES]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --save-seconds) save=${2:-}; shift 2 || usage ;;
    --cases) cases=${2:-}; shift 2 || usage ;;
    --time) minutes=${2:-}; shift 2 || usage ;;
    *) usage ;;
  esac
done
[[ $save =~ ^[1-9][0-9]*$ ]] || { echo "long-save.sh: --save-seconds takes whole seconds, at least 1" >&2; exit 2; }
[[ -z $minutes || $minutes =~ ^[1-9][0-9]*$ ]] || { echo "long-save.sh: --time takes whole minutes" >&2; exit 2; }
for c in ${cases//,/ }; do
  case $c in cancel | pausenow | window | timelimit) ;;
    *) echo "long-save.sh: unknown case $c (cancel, pausenow, window, timelimit)" >&2; exit 2 ;;
  esac
done
mlsup=$(realpath "${MLSUP:-build/mlsup}")
step_seconds=0.1
if [ -z "$minutes" ]; then
  minutes=3
  while [ $((minutes * 30)) -lt $((save + 30)) ]; do minutes=$((minutes + 1)); done
fi
lead_in=$(( save / 4 > 1 ? save / 4 : 1 ))  # window: the save starts this long before the close
own_cluster=""
work=$(mktemp -d "${TMPDIR:-/tmp}/mlsup-bench-longsave.XXXXXX")
runner=""

# Stops a run left behind, cancels what is left of this script's campaigns (by their tag only), the
# private cluster, the files.
cleanup() {
  [ -z "$runner" ] || kill "$runner" 2>/dev/null  # timeout hands the TERM on: run stops supervising
  cancel_leftovers "bench-longsave-.*-$$"
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
  if [ -n "${MLSUP_BENCH_KEEP:-}" ]; then echo "long-save.sh: the runs' folders are kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d "${TMPDIR:-/tmp}/mlsup-bench-cluster.XXXXXX")
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 2)"
fi

# Jobs Slurm still has of the campaigns whose name matches the regex $1 (their tag in the comment):
# cancelled, and said on stderr.
cancel_leftovers() {
  local ids
  mapfile -t ids < <(squeue -h -o '%i %k' 2>/dev/null | awk -v re="^mlsup:$1:" '$2 ~ re { print $1 }')
  [ "${#ids[@]}" -eq 0 ] || { echo "long-save.sh: cancelling jobs left behind: ${ids[*]}" >&2; scancel "${ids[@]}" 2>/dev/null; }
}

# `mlsup status --json` of the case's campaign, as a Python expression (lib.sh's mlsup_status_query).
query() { mlsup_status_query "$mlsup" "$conf" "$@" 2>/dev/null; }
# The events of kind $1 of the case's campaign (of attempt $2 when given), counted.
events_of() {
  "$mlsup" events "$conf" --json --kind "$1" 2>/dev/null | /usr/bin/python3 -c 'import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
n = sys.argv[1] if len(sys.argv) > 1 else ""
print(sum(1 for e in ev if not n or e.get("attempt") == int(n)))' ${2:+"$2"}
}
# A field of attempt $1's attempt-ended event (nothing before it ended).
ended_field() {
  "$mlsup" events "$conf" --json --kind attempt-ended 2>/dev/null | /usr/bin/python3 -c 'import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
print(next((e.get(sys.argv[2], "") for e in ev if e.get("attempt") == int(sys.argv[1])), ""))' "$1" "$2"
}
# A field of attempt $1 in status's history (nothing while it is null).
attempt_field() { query 'next((a[args[1]] for a in s["history"] if a["number"] == int(args[0])), None)' "$1" "$2"; }
# The newest complete checkpoint's step, 0 when there is none.
checkpoint_step() { query '(s["checkpoint"] or {}).get("step", 0)'; }
# True once attempt $1 runs and its training has reached step $2.
stepping() { [ "$(query 's["attempt"] == int(args[0]) and s["job_state"] == "RUNNING" and (s["step"] or 0) >= int(args[1])' "$1" "$2")" = True ]; }
attempt_ended() { [ "$(attempt_field "$1" ended)" = True ]; }
runner_gone() { ! kill -0 "$runner" 2>/dev/null; }

# Waits until a command succeeds, at most until the case's deadline or the run's end; fails then.
wait_for() {
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ] || runner_gone; then "$@"; return; fi
    sleep 1
  done
}
# Sleeps until epoch time $1 (fractional).
sleep_until() { sleep "$(/usr/bin/python3 -c 'import sys, time; print(max(0.0, float(sys.argv[1]) - time.time()))' "$1")"; }

# Slurm's StartTime, EndTime (0 while it runs) and TimeLimit (seconds) of job $1: "start end limit".
slurm_times() {
  scontrol -o show job "$1" 2>/dev/null | /usr/bin/python3 -c 'import re, sys, time
t = sys.stdin.read()
def at(key):
    m = re.search(r"\b" + key + r"=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)", t)
    return int(time.mktime(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))) if m else 0
ended = re.search(r"\bJobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|PREEMPTED|OUT_OF_MEMORY|DEADLINE|BOOT_FAIL)\b", t)
m = re.search(r"\bTimeLimit=(?:(\d+)-)?(\d+):(\d+):(\d+)", t)
limit = int(m.group(1) or 0) * 86400 + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4)) if m else 0
print(at("StartTime"), at("EndTime") if ended else 0, limit)'
}

# Writes the case's campaign (sets conf): campaign NAME SLURM-TIME SIGNAL-LEAD [YAML LINES].
campaign() {
  local dir=$work/$1
  mkdir -p "$dir"
  conf=$dir/campaign.yaml
  cat > "$conf" <<YAML
name: bench-longsave-$1-$$
template: $repo/templates/srun.sbatch.tmpl
vars: {script: $repo/examples/trainer/train.py, script_args: --steps 1000000 --step-seconds $step_seconds --ckpt-every 0 --slow-save-seconds $save}
slurm: {nodes: 1, ntasks_per_node: 1, time: "$2", signal_lead: $3}
checkpoint: {layout: glob, complete_marker: COMPLETE}
${4:-}
YAML
}
# Starts `mlsup run` on it under the case's hard limit (LIMIT seconds): start_run LIMIT.
start_run() {
  case_t0=$(date +%s.%N)
  deadline=$(( $(date +%s) + $1 - 5 ))
  timeout -s KILL "$1" "$mlsup" run "$conf" > "${conf%/*}/run.out" 2>&1 &
  runner=$!
}
# A verb under a hard limit, its output kept beside the config: verb NAME ARGS...
verb() {
  timeout -s KILL 60 "$mlsup" "$@" >> "${conf%/*}/verbs.out" 2>&1 ||
    echo "long-save.sh: mlsup $1 exited $?: $(tail -1 "${conf%/*}/verbs.out")" >&2
}
# Ends the run: the campaign is cancelled when it did not end by itself, then waited for until the
# case's deadline (killed after it); sets rc.
end_run() {
  local state
  state=$(query 's["state"]')
  case $state in cancelled | stopped | completed) ;; *) runner_gone || verb cancel "$conf" ;; esac
  until runner_gone || [ "$(date +%s)" -ge $((deadline + 5)) ]; do sleep 0.5; done
  runner_gone || { echo "long-save.sh: mlsup run outlived the case's limit" >&2; kill -9 "$runner" 2>/dev/null; }
  wait "$runner"; rc=$?
  runner=""
  cancel_leftovers "bench-longsave-$1-$$"
}

# One row: case before after cancelling t0 end action exit.
row() {
  local before=$2 after=$3 kept=no to_end=-
  [ -n "$after" ] && [ "$after" -gt "${before:-0}" ] 2>/dev/null && kept=yes
  [ "$6" = 0 ] || [ -z "$6" ] || to_end=$(/usr/bin/python3 -c 'import sys; print("%.0f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$5" "$6")
  [ "${before:-0}" != 0 ] || before=-
  printf '%-11s %7s %7s %5s %10s %9s %-9s %4s %7.1f\n' "$1" "$before" "${after:--}" "$kept" "$4" "$to_end" "${7:--}" "$8" \
    "$(/usr/bin/python3 -c 'import sys, time; print(time.time() - float(sys.argv[1]))' "$case_t0")"
}
note() { echo "    $*"; }
# What mlsup measured of the saves, for the note.
pace() { query '"saves measured: %d%s" % (s["pace"]["saves_measured"], "" if s["pace"]["save_p95"] is None else ", p95 %.1f s" % s["pace"]["save_p95"]) if s["pace"] else "saves measured: 0"'; }

# The attempt-ended event's facts of attempt $1 for the note: its class, step, Slurm's state.
ending() { echo "attempt $1 ended $(ended_field "$1" class) at step $(ended_field "$1" step) ($(ended_field "$1" slurm_state))"; }
hhmm() { date -u -d "@$1" +%H:%M; }
seconds() { /usr/bin/python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$2"; }

# cancel, pausenow: the verb (verb_case NAME VERB [ARGS]) once the training steps, then the job's end.
verb_case() {
  local name=$1 before t0 end after cancelling state measured
  shift
  campaign "$name" "01:00:00" 5m
  start_run $((240 + 3 * save))
  wait_for stepping 1 10 || note "the training did not start stepping before the case's limit"
  before=$(checkpoint_step)
  t0=$(date +%s.%N)
  verb "$1" "$conf" "${@:2}"
  wait_for attempt_ended 1
  read -r _ end _ <<< "$(slurm_times "$(attempt_field 1 job_id)")"
  after=$(ended_field 1 checkpoint_step)
  cancelling=$(events_of cancelling)
  state=$(query 's["state"]')
  measured=$(pace)
  end_run "$name"
  row "$name" "$before" "$after" "$cancelling" "$t0" "$end" "$(ended_field 1 action)" "$rc"
  note "mlsup $*: $(ending 1); then $state; $measured"
}

# window: a save started lead_in s before the close.
window_case() {
  local now close before asked end after cancelling closed state measured
  now=$(date +%s)
  close=$(( (now / 60 + 1) * 60 ))
  while [ $((close - now)) -lt $((30 + lead_in)) ]; do close=$((close + 60)); done
  campaign window "01:00:00" 5m "window: {hours: \"$(hhmm $((close + 6 * 3600)))-$(hhmm "$close")\", zone: UTC}"
  start_run $((close - now + 240 + 3 * save))
  wait_for stepping 1 10 || note "the training did not start stepping before the close"
  sleep_until $((close - lead_in))
  before=$(checkpoint_step)
  asked=$(date +%s.%N)
  verb save "$conf"
  wait_for attempt_ended 1
  read -r _ end _ <<< "$(slurm_times "$(attempt_field 1 job_id)")"
  after=$(ended_field 1 checkpoint_step)
  cancelling=$(events_of cancelling)
  closed=$("$mlsup" events "$conf" --json --kind window-closed 2>/dev/null | /usr/bin/python3 -c 'import json, sys
t = [json.loads(l)["time"] for l in sys.stdin if l.strip()]
print("told window-closed %.1f s after it" % (t[0] - float(sys.argv[1])) if t else "no window-closed event")' "$close")
  state=$(query 's["state"]')
  measured=$(pace)
  end_run window
  row window "$before" "$after" "$cancelling" "$close" "$end" "$(ended_field 1 action)" "$rc"
  note "closed at $(hhmm "$close") UTC, $closed; the save asked $(seconds "$asked" "$close") s before it; $(ending 1); then $state; $measured"
}

# timelimit: two attempts ended by their time limits; a row for each.
timelimit_case() {
  local n start end limit rows=() leads="" state signal_lead measured r f
  campaign timelimit "$minutes" auto "target: {steps: 1000000}"
  start_run $((2 * minutes * 60 + 300 + 2 * save))
  wait_for stepping 2 1 || note "attempt 2 did not start before the case's limit"
  verb pause "$conf"  # plain: attempt 2 goes on to its limit; no third starts
  wait_for attempt_ended 2
  for n in 1 2; do
    read -r start end limit <<< "$(slurm_times "$(attempt_field "$n" job_id)")"
    rows+=("timelimit-$n $(attempt_field "$n" resume_step) $(ended_field "$n" checkpoint_step) $(events_of cancelling "$n") $((start + limit)) ${end:-0} $(ended_field "$n" action)")
    leads+="attempt $n's lead $(attempt_field "$n" signal_lead) s, $(ending "$n"); "
  done
  state=$(query 's["state"]')
  signal_lead=$(query '"needed %s s, next %s s" % (s["signal_lead"]["needed"], s["signal_lead"]["next"])')
  measured=$(pace)
  end_run timelimit
  for r in "${rows[@]}"; do
    read -r -a f <<< "$r"
    row "${f[@]}" "$rc"
  done
  note "slurm.time $minutes min; ${leads}then $state; status's signal_lead: $signal_lead; $measured"
}

echo "save $save s, steps of $step_seconds s, policy.stop_grace 1m (the default); $(scontrol show config | awk '$1 == "ClusterName" { print "cluster " $3 }')"
printf '%-11s %7s %7s %5s %10s %9s %-9s %4s %7s\n' case before after kept cancelling "t0->end" action exit wall
for c in ${cases//,/ }; do
  case $c in
    cancel) verb_case cancel cancel ;;
    pausenow) verb_case pausenow pause --now ;;
    window) window_case ;;
    timelimit) timelimit_case ;;
  esac
done
