#!/usr/bin/env bash
# Time lost per fault: one 2-node campaign of 300 steps of 0.05 s (15 s of ideal work, a checkpoint
# every 20 steps, heartbeat.steady_timeout 8 s, otherwise defaults: 10 s initial backoff) run clean,
# with a trainer crash at step 150 in the first attempt, and with a sticky bad node (the lowest, where
# Slurm puts rank 0 first; the trainer crashes at start whenever it runs there). Prints, per case,
# mlsup run's wall time, the time lost against the clean run, the attempts, the seconds between
# each ending and the next submission (mlsup's waiting), and per fault the restart split as
# detect+react+queue: the failed job's end in Slurm -> mlsup's attempt-ended event -> the next
# submission -> the next attempt's start (Slurm's StartTime of its job). Slurm's times are whole
# seconds, so detect and queue are each good to about a second (their sum with react is too).
#   benchmarks/recovery.sh [--repeat N] [--chain] [--busy]
# --chain: the same campaigns as a chain (slurm.array "1-8%1"): the next attempt is a task already
#   queued, so react ends at mlsup's handed-over event and queue at the task's claimed event.
# --busy: another workload keeps the cluster full. Before each campaign a filler (same user, its own
#   job name, no mlsup tag in its comment, so mlsup never takes it for its own) takes every node but
#   the two lowest with whole-node jobs of FILLER_SECONDS (20) s; once the campaign's job is queued it
#   keeps FILLER_QUEUED (2) more queued, so every node freed is taken at once and a resubmission
#   waits behind the filler jobs queued before it until two usable nodes are free together. The
#   queue wait thus depends on the filler's job length: about one filler job, more when filler jobs
#   submitted while mlsup detects and reacts get ahead. The filler's jobs are cancelled (by their
#   name only) when the campaign ends and when the script exits.
# MLSUP picks the binary (default build/mlsup). Uses the cluster named by SLURM_CONF, or starts (and
# stops) a private one.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
repeat=1 chain="" busy=""
while [ $# -gt 0 ]; do
  case $1 in
    --repeat) repeat=$2; shift 2 ;;
    --chain) chain=1; shift ;;
    --busy) busy=1; shift ;;
    *) echo "usage: $0 [--repeat N] [--chain] [--busy]" >&2; exit 2 ;;
  esac
done
mlsup=$(realpath "${MLSUP:-build/mlsup}")
filler_name=bench-filler-$$
own_cluster=""
work=$(mktemp -d /tmp/mlsup-bench-recovery.XXXXXX)

# Stops the filler, cancels its jobs (only those, by their name), the private cluster, the files.
cleanup() {
  stop_filler
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/mlsup-bench-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4 --slurmd-timeout 10)"
fi
export MLSUP_FAULT_DIR=$work/faults
mkdir -p "$MLSUP_FAULT_DIR/sticky-bad"
bad=$(sinfo -h -N -o '%N' | sort -uV | head -1)

# The filler's loop: once an mlsup job is queued or runs, keeps FILLER_QUEUED (2) filler jobs queued.
filler_loop() {
  until squeue -h -o '%k' | grep -q 'mlsup:'; do sleep 0.2; done
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

# With --busy: fills every node but the two lowest (the campaign's first job takes those, as on an
# idle cluster), waits until those filler jobs run, then starts the loop (its pid in $work/filler.pid).
start_filler() {
  [ -n "$busy" ] || return 0
  local nodes others
  nodes=$(sinfo -h -N -o '%N' | sort -uV)
  others=$(($(wc -l <<< "$nodes") - 2))
  filler_submit "$others" -x "$(head -2 <<< "$nodes" | paste -sd,)"
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
  local total
  total=$(sinfo -h -N -o '%N' | sort -u | wc -l)
  for _ in $(seq 60); do
    scancel -n "$filler_name" -u "$(id -un)" 2>/dev/null
    [ "$(sinfo -h -N -t idle -o '%N' | sort -u | wc -l)" -ge "$total" ] && return 0
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
nxt = {n: hand.get(n + 1) or sub.get(n + 1) for n in ended}
gaps = ["%.1f" % (nxt[n]["time"] - ended[n]["time"]) for n in sorted(ended) if nxt[n]]
attempts = max([e["attempt"] for e in ev if "attempt" in e] or [0])
def split(n):
    if nxt[n] is None: return None
    end, seen = slurm(ended[n]["job_id"], "EndTime"), ended[n]["time"]
    start = claim[n + 1]["time"] if n + 1 in claim else slurm(sub.get(n + 1, {}).get("job_id"), "StartTime")
    if end is None or start is None: return "?"
    return "%.1f+%.1f+%.1f" % (seen - end, nxt[n]["time"] - seen, start - nxt[n]["time"])
rs = [r for r in (split(n) for n in sorted(ended)) if r]
print("%.1f %d %s %s" % (t1 - t0, attempts, ",".join(gaps) or "-", ",".join(rs) or "-"))' "$@"
}

# Runs one campaign (name, trainer arguments); prints "wall attempts gaps restarts".
campaign() {
  local dir=$work/$1
  mkdir -p "$dir"
  cat > "$dir/campaign.yaml" <<YAML
name: bench-recovery-$1-$$
template: $repo/templates/srun.sbatch.tmpl
vars: {script: $repo/examples/trainer/train.py, script_args: --steps 300 --step-seconds 0.05 --ckpt-every 20 $2}
slurm: {nodes: 2, ntasks_per_node: 1, time: "00:10:00"${chain:+, array: \"1-8%1\"}}
checkpoint: {layout: glob, complete_marker: COMPLETE}
heartbeat: {steady_timeout: 8s}
YAML
  local t0 t1
  start_filler
  t0=$(date +%s.%N)
  timeout -s KILL 300 "$mlsup" run "$dir/campaign.yaml" > "$dir/run.out" 2>&1
  t1=$(date +%s.%N)
  stop_filler
  "$mlsup" events "$dir/campaign.yaml" --json | summarise "$t0" "$t1"
}

# Prints one row of the table: case, wall, clean wall (empty for the clean case), the rest.
row() {
  local lost=-
  [ -z "$3" ] || lost=$(printf '%.1f' "$(echo "$2 - $3" | bc)")
  printf '%-8s %6.1f %6s %8s  %-26s %s\n' "$1" "$2" "$lost" "$4" "$5" "$6"
}

echo "mode: $([ -n "$chain" ] && echo chain || echo single), $([ -n "$busy" ] && echo busy || echo idle) cluster"
printf '%-8s %6s %6s %8s  %-26s %s\n' case wall lost attempts "ending->next submission" \
  "restart: detect+react+queue (s)"
for i in $(seq 1 "$repeat"); do
  read -r clean n gaps rs < <(campaign "clean$i" "")
  row clean "$clean" "" "$n" "$gaps" "$rs"
  read -r wall n gaps rs < <(campaign "crash$i" "--fail-at-step 150 --fail-attempts 1")
  row crash "$wall" "$clean" "$n" "$gaps" "$rs"
  : > "$MLSUP_FAULT_DIR/sticky-bad/$bad"
  read -r wall n gaps rs < <(campaign "sticky$i" "")
  rm -f "$MLSUP_FAULT_DIR/sticky-bad/$bad"
  row sticky "$wall" "$clean" "$n" "$gaps" "$rs"
done
