#!/usr/bin/env bash
# Time lost per fault, by an outside stopwatch and as mlsup tells it: one 2-node campaign of 300 steps of 0.05 s (15 s of ideal work, a checkpoint
# every 20 steps, heartbeat.steady_timeout 8 s, otherwise defaults: 10 s initial backoff) run clean,
# with a trainer crash at step 150 in the first attempt, with a sticky bad node (the lowest, where
# Slurm puts rank 0 first; the trainer crashes at start whenever it runs there), with a hang before
# step 150 (the trainer stops for good) and with a node crash at step 150 (the slurmd and every
# process of the job's last node killed; revived after the run). Prints, per case,
# mlsup run's wall time, the time lost against the clean run (the stopwatch: this run's wall less the
# clean run's), mlsup's own figure for it ("told": status --json's time.lost_to_failures), the attempts, the seconds between
# each ending and the next submission (mlsup's waiting), and per fault the restart split as
# detect+react+queue: the failed job's end in Slurm -> mlsup's attempt-ended event -> the next
# submission -> the next attempt's start (Slurm's StartTime of its job). Slurm's times are whole
# seconds, so detect and queue are each good to about a second (their sum with react is too). A hung
# job, or one with a crashed node, ends when mlsup cancels it: there the split starts at that end,
# and the detection itself (the 8 s steady timeout; for the crash also the probe) is in "lost".
# Two more cases: a power loss at step 150 (`fault.sh freeze`: the last node's
# slurmd and processes SIGSTOPped, as when it loses power or its network; thawed after the run),
# whose row means most on a cluster with a real SlurmdTimeout (300 s: --slurmd-timeout 300 for the
# private cluster), and a time limit: a 2400-step training (120 s of ideal work) under a 2-minute
# limit with the pre-timeout signal 30 s before it (slurm.signal_lead; Slurm may send it up to a
# minute earlier still), so each job saves and ends early and the next resumes; it is compared with a
# clean run of the same 2400 steps (row clean2400). The book's way gets the same limit and no signal
# (Slurm kills the task at the limit).
#   benchmarks/recovery.sh [--repeat N] [--chain | --spares] [--busy] [--book] [--schedule] [--cases LIST]
#                          [--slurmd-timeout S] [--cron S]
# --cron S: no supervisor runs; `mlsup tick` every S seconds carries each campaign, as cron would (the
#   clean run too, so the stopwatch's lost time is what the fault costs under cron).
# --cases: comma-separated, from clean, crash, sticky, hang, nodecrash, powerloss, timelimit
#   (default: all but timelimit, which takes 5 minutes); a fault's lost time needs clean before it.
# --slurmd-timeout: the private cluster's SlurmdTimeout (default 10); the header prints the cluster's.
# --chain: the same campaigns as a chain (slurm.array "1-8%1"): the next attempt is a task already
#   queued, so react ends at mlsup's handed-over event and queue at the task's claimed event.
# --spares: the same campaigns with one spare node (slurm.spare_nodes: 1; the job holds 3 nodes): a
#   failed or hung run restarts inside the same job when it can, so react ends at mlsup's handed-over
#   event and queue at the job's claim of the next attempt; detect starts at the run's end as the job
#   recorded it (spares/claims/<attempt>/end), or, for a run mlsup killed, at its attempt-ended event.
#   Node faults hit the last node the training runs on, not the spare.
# --busy: another workload keeps the cluster full. Before each campaign a filler (same user, its own
#   job name, no mlsup tag in its comment, so mlsup never takes it for its own) takes every node but
#   the two lowest with whole-node jobs of FILLER_SECONDS (20) s; once the campaign's job is queued it
#   keeps FILLER_QUEUED (2) more queued, so every node freed is taken at once and a resubmission
#   waits behind the filler jobs queued before it until two usable nodes are free together. The
#   queue wait thus depends on the filler's job length: about one filler job, more when filler jobs
#   submitted while mlsup detects and reacts get ahead. The filler's jobs are cancelled (by their
#   name only) when the campaign ends and when the script exits.
# --book: the same trainings without mlsup, the usual hand-made way: one `sbatch --array=1-8%1
#   --requeue` whose every task resumes from the newest complete checkpoint it finds (and exits at
#   once when the result is there), with a 2-minute time limit (a hang lasts until it). Wall is
#   from the sbatch to the result; "attempts" counts the tasks that ran the training; a run that has
#   no result when the array is spent shows "no result".
# --schedule: instead of the five cases, goodput under a fixed fault schedule: a training of 600 steps
#   (30 s of ideal work) run clean and with three faults, one per attempt: a crash at step 150 in
#   attempt 1, a hang before step 300 in attempt 2, a node crash at step 450 in attempt 3 (the book's
#   way numbers its attempts the same: task 1, 2, 3, and Slurm's requeue of task 3). Prints per way
#   the goodput (ideal work / wall) of both runs.
# MLSUP picks the binary (default build/mlsup); MLSUP_BENCH_KEEP=1 keeps the runs' folders. Uses
# the cluster named by SLURM_CONF, or starts (and stops) a private one.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source benchmarks/lib.sh
repeat=1 chain="" spares="" busy="" book="" schedule="" steps=300 slurmd_timeout=10 cron=""
cases=clean,crash,sticky,hang,nodecrash,powerloss
while [ $# -gt 0 ]; do
  case $1 in
    --repeat) repeat=$2; shift 2 ;;
    --chain) chain=1; shift ;;
    --spares) spares=1; shift ;;
    --busy) busy=1; shift ;;
    --book) book=1; shift ;;
    --schedule) schedule=1 steps=600; shift ;;
    --cases) cases=$2; shift 2 ;;
    --slurmd-timeout) slurmd_timeout=$2; shift 2 ;;
    --cron) cron=$2; shift 2 ;;
    *) echo "usage: $0 [--repeat N] [--chain | --spares] [--busy] [--book] [--schedule] [--cases LIST] [--slurmd-timeout S] [--cron S]" >&2
      exit 2 ;;
  esac
done
mlsup=$(realpath "${MLSUP:-build/mlsup}")
step_seconds=0.05
train_args="--steps $steps --step-seconds $step_seconds --ckpt-every 20"  # the faults' arguments follow
filler_name=bench-filler-$$
job_time=00:10:00 lead="" book_time=00:02:00  # the time limit case sets its own
own_cluster=""
work=$(mktemp -d /tmp/mlsup-bench-recovery.XXXXXX)

# Stops the filler, cancels its jobs (only those, by their name), the private cluster, the files.
cleanup() {
  stop_filler
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
  if [ -n "${MLSUP_BENCH_KEEP:-}" ]; then echo "recovery.sh: the runs' folders are kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/mlsup-bench-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4 --slurmd-timeout "$slurmd_timeout")"
fi
export MLSUP_FAULT_DIR=$work/faults
mkdir -p "$MLSUP_FAULT_DIR/sticky-bad"
bad=$(sinfo -h -N -o '%N' | sort -uV | head -1)

# The filler's loop: once an mlsup job is queued or runs, keeps FILLER_QUEUED (2) filler jobs queued.
filler_loop() {
  until squeue -h -o '%k' | grep 'mlsup:' >/dev/null; do sleep 0.2; done
  while :; do
    filler_submit $((${FILLER_QUEUED:-2} - $(squeue -h -n "$filler_name" -t PD -o '%i' | wc -l)))
    sleep 0.5
  done
}

# Submits N (may be 0 or less) one-node filler jobs of FILLER_SECONDS (20) s, each a whole node;
# further arguments go to sbatch.
filler_submit() {
  local i n=$1
  shift
  for ((i = 0; i < n; i++)); do
    sbatch -Q -J "$filler_name" -N1 --exclusive --time=1 -o /dev/null "$@" \
      --wrap "sleep ${FILLER_SECONDS:-20}" >/dev/null
  done
}

# With --busy: fills every node but the two lowest (three with --spares: the campaign's first job
# takes those, as on an idle cluster), waits until those filler jobs run, then starts the loop (its pid in $work/filler.pid).
start_filler() {
  [ -n "$busy" ] || return 0
  local nodes others
  nodes=$(sinfo -h -N -o '%N' | sort -uV)
  others=$(($(wc -l <<< "$nodes") - 2 - ${spares:-0}))
  filler_submit "$others" -x "$(head -$((2 + ${spares:-0})) <<< "$nodes" | paste -sd,)"
  until [ "$(squeue -h -n "$filler_name" -t R -o '%i' | wc -l)" -ge "$others" ]; do sleep 0.2; done
  filler_loop >/dev/null 2>&1 &
  echo $! > "$work/filler.pid"
}

# Stops the filler's loop, cancels the filler's jobs (by their name only) and waits up to 30 s for
# every node to be idle again.
stop_filler() {
  [ -f "$work/filler.pid" ] || return 0
  kill "$(cat "$work/filler.pid")" 2>/dev/null
  rm -f "$work/filler.pid"
  for _ in $(seq 60); do
    scancel -n "$filler_name" -u "$(id -un)" 2>/dev/null
    all_nodes_idle && return 0
    sleep 0.5
  done
}

# Prints "wall attempts gaps restarts" from the event log on stdin; t0, t1 the run's bounds.
summarise() {
  python3 -c 'import json, subprocess, sys, time
t0, t1 = float(sys.argv[1]), float(sys.argv[2])
ev = [json.loads(l) for l in sys.stdin if l.strip()]
def at(kind): return {e["attempt"]: e for e in ev if e.get("event") == kind}
def slurm(job, key):
    out = subprocess.run(["scontrol", "-o", "show", "job", str(job)], capture_output=True, text=True).stdout
    f = dict(w.split("=", 1) for w in out.split() if "=" in w)
    try: return time.mktime(time.strptime(f.get(key, ""), "%Y-%m-%dT%H:%M:%S"))
    except ValueError: return None
ended, sub, hand, claim = at("attempt-ended"), at("submitted"), at("handed-over"), at("claimed")
def run_end(n):  # spare nodes: the run'"'"'s end as the job recorded it
    import glob, os
    found = glob.glob(sys.argv[3] + "/.mlsup/*/spares/claims/%d/end" % n) if len(sys.argv) > 3 else []
    return os.path.getmtime(found[0]) if found else None
nxt = {n: hand.get(n + 1) or sub.get(n + 1) for n in ended}
gaps = ["%.1f" % (nxt[n]["time"] - ended[n]["time"]) for n in sorted(ended) if nxt[n]]
attempts = max([e["attempt"] for e in ev if "attempt" in e] or [0])
def split(n):
    if nxt[n] is None: return None
    seen = ended[n]["time"]
    end = (run_end(n) or seen) if n + 1 in hand and n + 1 not in sub else slurm(ended[n]["job_id"], "EndTime")
    start = claim[n + 1]["time"] if n + 1 in claim else slurm(sub.get(n + 1, {}).get("job_id"), "StartTime")
    if end is None or start is None: return "?"
    # Slurm'"'"'s times are whole seconds (truncated): a part that comes out below 0 is 0.
    parts = (seen - end, nxt[n]["time"] - seen, start - nxt[n]["time"])
    return "+".join("%.1f" % max(0.0, p) for p in parts)
rs = [r for r in (split(n) for n in sorted(ended)) if r]
print("%.1f %d %s %s" % (t1 - t0, attempts, ",".join(gaps) or "-", ",".join(rs) or "-"))' "$@"
}

# The cluster's folder, for fault.sh.
cluster_dir=${own_cluster:-$(dirname "$SLURM_CONF")}

# Run in the background beside a campaign (its folder $1): once attempt $2's heartbeat reaches step
# $3, does `fault.sh $4` (crash: the slurmd and every process killed; freeze: SIGSTOPped) to the last
# node of its job, and writes the node's name into $1/crashed (end_run revives it).
fault_node_when() {
  local dir=$1 attempt=$2 step=$3 fault=$4 hb node
  hb() { ls "$dir"/.mlsup/*/heartbeats/attempt-"$attempt" "$dir/state/heartbeat-$attempt" 2>/dev/null | head -1; }
  until [ "$(cut -d' ' -f1 "$(hb)" 2>/dev/null || echo 0)" -ge "$step" ] 2>/dev/null; do sleep 0.05; done
  if [ -f "$dir/book" ]; then
    node=$(squeue -h -n "$(cat "$dir/book")" -t R -o %N | head -1)
  else
    # the training's nodes: the run's own with spare nodes, else the job's
    node=$("$mlsup" status "$dir/campaign.yaml" --json | python3 -c 'import json, sys
s = json.load(sys.stdin)
run = [a.get("step_nodes") for a in s["history"] if a["number"] == int(sys.argv[1])]
print(",".join(run[0]) if run and run[0] else s["nodes"] or "")' "$attempt")
  fi
  node=$(scontrol show hostnames "$node" | tail -1)
  tests/cluster/fault.sh --dir "$cluster_dir" "$fault" "$node" >/dev/null 2>&1
  echo "$node" > "$dir/crashed"
}
crash_node_at_150() { fault_node_when "$1" 1 150 crash; }
freeze_node_at_150() { fault_node_when "$1" 1 150 freeze; }
crash_node_in_attempt_3_at_450() { fault_node_when "$1" 3 450 crash; }

# Starts the fault injector $2 (none when empty) in the background beside the run in folder $1.
start_injector() { injector=""; [ -z "$2" ] || { "$2" "$1" & injector=$!; }; }
# After the run in folder $1: stops its injector, revives the node it crashed, stops the filler.
end_run() {
  [ -z "$injector" ] || { kill "$injector" 2>/dev/null; wait "$injector" 2>/dev/null; }
  if [ -f "$1/crashed" ]; then
    tests/cluster/fault.sh --dir "$cluster_dir" revive "$(cat "$1/crashed")" --timeout 60 >/dev/null 2>&1
    nodes_idle_again 60 recovery.sh
  fi
  stop_filler
}

# The training's length for the case's trainer arguments $1: the last --steps given.
steps_of() { grep -oE -- '--steps [0-9]+' <<< "$train_args $1" | tail -1 | cut -d' ' -f2; }

# --cron: `mlsup tick CONFIG` every $cron seconds until the campaign has ended (300 s at most).
ticks() {
  local deadline=$((SECONDS + 300)) state
  while [ "$SECONDS" -lt "$deadline" ]; do
    timeout -s KILL 120 "$mlsup" tick "$1"
    state=$("$mlsup" status --json "$1" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])')
    case $state in completed | stopped | cancelled) return 0 ;; esac
    sleep "$cron"
  done
}

# Runs one campaign (name, trainer arguments, optionally a fault to run beside it); prints "wall
# attempts gaps restarts".
campaign() {
  local dir=$work/$1
  mkdir -p "$dir"
  # target.steps: a job that ends early on the pre-timeout signal is resumed, not taken for the
  # training's completion.
  cat > "$dir/campaign.yaml" <<YAML
name: bench-recovery-$1-$$
template: $repo/templates/srun.sbatch.tmpl
vars: {script: $repo/examples/trainer/train.py, script_args: $train_args $2}
slurm: {nodes: 2, ntasks_per_node: 1, time: "$job_time"${lead:+, signal_lead: $lead}${chain:+, array: \"1-8%1\"}${spares:+, spare_nodes: 1}}
checkpoint: {layout: glob, complete_marker: COMPLETE}
heartbeat: {steady_timeout: 8s}
target: {steps: $(steps_of "$2")}
YAML
  local t0 t1
  start_filler
  t0=$(date +%s.%N)
  start_injector "$dir" "${3:-}"
  if [ -n "$cron" ]; then
    ticks "$dir/campaign.yaml" > "$dir/run.out" 2>&1
  else
    timeout -s KILL 300 "$mlsup" run "$dir/campaign.yaml" > "$dir/run.out" 2>&1
  fi
  t1=$(date +%s.%N)
  end_run "$dir"
  local told  # mlsup's own figure, to set beside the stopwatch's
  told=$("$mlsup" status --json "$dir/campaign.yaml" 2>/dev/null |
    python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["time"]["lost_to_failures"])' 2>/dev/null || echo "?")
  echo "$("$mlsup" events "$dir/campaign.yaml" --json | summarise "$t0" "$t1" "$dir") $told"
}

# The book's way (--book): runs one training (name, trainer arguments, optionally a fault to run
# beside it) as a self-resuming array; prints "wall tasks - -", or "wall no-result - -".
book_campaign() {
  local dir=$work/$1 name=bench-book-$1-$$
  mkdir -p "$dir/ckpt" "$dir/state"
  echo "$name" > "$dir/book"
  cat > "$dir/job.sbatch" <<SH
#!/bin/bash
#SBATCH --job-name=$name
#SBATCH --comment=mlsup:book
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --time=$book_time
#SBATCH --array=1-8%1
#SBATCH --requeue
#SBATCH --output=$dir/task-%a.out
[ -e "$dir/state/result.json" ] && exit 0
latest=\$(ls -d "$dir"/ckpt/step_*/COMPLETE 2>/dev/null | sort -V | tail -1)
export MLSUP_RUN=$name MLSUP_STATE_DIR="$dir/state" MLSUP_CHECKPOINT_DIR="$dir/ckpt"
export MLSUP_ATTEMPT=\$((SLURM_ARRAY_TASK_ID + 100 * \${SLURM_RESTART_COUNT:-0}))
export MLSUP_HEARTBEAT_FILE="$dir/state/heartbeat-\$MLSUP_ATTEMPT" MLSUP_RESUME_FROM="\${latest%/COMPLETE}"
srun --kill-on-bad-exit=1 python3 -u $repo/examples/trainer/train.py $train_args $2
SH
  local t0 t1 array
  start_filler
  t0=$(date +%s.%N)
  array=$(sbatch --parsable "$dir/job.sbatch")
  start_injector "$dir" "${3:-}"
  local deadline=$(( $(date +%s) + 600 ))
  until [ -e "$dir/state/result.json" ] || [ -z "$(squeue -h -j "$array" -o %i 2>/dev/null)" ] ||
    [ "$(date +%s)" -ge "$deadline" ]; do sleep 0.1; done
  t1=$(date +%s.%N)
  scancel "$array" 2>/dev/null
  end_run "$dir"
  local tasks
  # A task that ran the training: its trainer logged an ending, or it wrote a heartbeat (a hung or
  # killed one logs nothing).
  tasks=$(python3 -c 'import glob, json, os, sys
d = sys.argv[1]
seen = {os.path.basename(h).split("-", 1)[1] for h in glob.glob(d + "/heartbeat-*")}
if os.path.exists(d + "/trainer-log.jsonl"):
    seen |= {str(json.loads(l)["attempt"]) for l in open(d + "/trainer-log.jsonl") if l.strip()}
print(len(seen))' "$dir/state")
  if [ -e "$dir/state/result.json" ]; then
    echo "$(echo "$t1 - $t0" | bc) $tasks - -"
  else
    echo "$(echo "$t1 - $t0" | bc) $tasks no-result -"
  fi
}

# Prints one row of the table: case, wall, clean wall (empty for the clean case), the rest.
row() {
  local lost=-
  [ -z "$3" ] || lost=$(printf '%.1f' "$(echo "$2 - $3" | bc)")
  printf '%-14s %6.1f %6s %6s %8s  %-26s %s\n' "$1" "$2" "$lost" "${7:--}" "$4" "$5" "$6"
}

echo "mode: $([ -n "$chain" ] && echo chain || { [ -n "$spares" ] && echo spares; } || echo single), $([ -n "$busy" ] && echo busy || echo idle) cluster,${cron:+ mlsup tick every $cron s,}" \
  "$(scontrol show config | awk '$1 == "SlurmdTimeout" { print $1 "=" $3 }')"
[ -z "$book" ] || echo "rows */book: the book's way, measured beside each (--array=1-8%1 --requeue, no mlsup)"
printf '%-14s %6s %6s %6s %8s  %-26s %s\n' case wall lost told attempts "ending->next submission" \
  "restart: detect+react+queue (s)"
declare -A clean_of
# One case with mlsup and, with --book, the book's way: fault NAME TRAINER-ARGS [INJECTOR]; the
# sticky case marks the lowest node bad for its runs.
fault() {
  local way fn label wall n gaps rs told length
  length=$(steps_of "$2")  # a fault's lost time is against the clean run (clean*) of its length
  for way in mlsup ${book:+book}; do
    fn=campaign label=$1
    [ "$way" = mlsup ] || { fn=book_campaign label=$1/book; }
    [ "$1" != sticky ] || : > "$MLSUP_FAULT_DIR/sticky-bad/$bad"
    read -r wall n gaps rs told < <("$fn" "$1$i-$way" "$2" "${3:-}")
    rm -f "$MLSUP_FAULT_DIR/sticky-bad/$bad"
    [[ $1 != clean* ]] || clean_of[$way/$length]=$wall
    [ "$1" != schedule ] || schedule_of[$way]=$([ "$gaps" = no-result ] && echo none || echo "$wall")
    row "$label" "$wall" "$([[ $1 == clean* ]] || echo "${clean_of[$way/$length]:-}")" "$n" "$gaps" "$rs" "${told:--}"
  done
}
# With --schedule: the goodput of each way's clean and faulty run (ideal work: steps x step_seconds).
goodput() {
  local way
  for way in mlsup ${book:+book}; do
    python3 -c 'import sys
ideal, clean = map(float, sys.argv[2:4])
faulty = "no result" if sys.argv[4] == "none" else "%.2f" % (ideal / float(sys.argv[4]))
print("goodput %-5s (%.0f s of ideal work / wall): clean %.2f, under the fault schedule %s" % (sys.argv[1], ideal, ideal / clean, faulty))' \
      "$way" "$(echo "$steps * $step_seconds" | bc)" "${clean_of[$way/$steps]}" "${schedule_of[$way]}"
  done
}
declare -A schedule_of
if [ -n "$schedule" ]; then
  for i in $(seq 1 "$repeat"); do
    fault clean ""
    fault schedule "--fail-at-step 150 --fail-attempts 1 --hang-at-step 300 --hang-attempts 2" crash_node_in_attempt_3_at_450
    goodput
  done
  exit 0
fi
# The cases chosen with --cases, in the order given: case NAME.
run_case() {
  case $1 in
    clean) fault clean "" ;;
    crash) fault crash "--fail-at-step 150 --fail-attempts 1" ;;
    sticky) fault sticky "" ;;
    hang) fault hang "--hang-at-step 150 --fail-attempts 1" ;;
    nodecrash) fault nodecrash "" crash_node_at_150 ;;
    powerloss) fault powerloss "" freeze_node_at_150 ;;
    timelimit)
      # Its own clean run of the same length (no limit for the book either), then the limited one.
      book_time=00:10:00 fault clean2400 "--steps 2400"
      job_time=00:02:00 lead=30s book_time=00:02:00 fault timelimit "--steps 2400" ;;
  esac
}
for c in ${cases//,/ }; do
  case $c in
    clean | crash | sticky | hang | nodecrash | powerloss | timelimit) ;;
    *) echo "recovery.sh: unknown case $c (see --cases in the script's header)" >&2; exit 2 ;;
  esac
done
for i in $(seq 1 "$repeat"); do
  for c in ${cases//,/ }; do run_case "$c"; done
done
