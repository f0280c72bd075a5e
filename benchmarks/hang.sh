#!/usr/bin/env bash
# How fast mlsup finds a hang and replaces a job whose node lost power, on a private cluster with
# Slurm's default SlurmdTimeout=300 (Slurm alone needs 5 minutes to notice the node, then requeues
# the job for ~2 minutes more). Alternates two faults on a running 2-node training:
#   hang:       every task SIGSTOPped on live nodes -> time to mlsup's hang-detected event
#   power loss: one node's slurmd, steps and tasks SIGSTOPped -> time to hang-detected and to the
#               replacement RUNNING without that node
#   benchmarks/hang.sh [--trials 6] [--steady 5s] [--poll 500ms] [--probe 5s]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source benchmarks/lib.sh
trials=6 steady=5s poll=500ms probe=5s
while [ $# -gt 0 ]; do
  case $1 in
    --trials) trials=$2 ;; --steady) steady=$2 ;; --poll) poll=$2 ;; --probe) probe=$2 ;;
    *) echo "usage: $0 [--trials N] [--steady DUR] [--poll DUR] [--probe DUR]" >&2; exit 2 ;;
  esac
  shift 2
done
mlsup=${MLSUP:-build/mlsup}  # MLSUP picks the binary
[ -x "$mlsup" ] || ./scripts/build.sh >/dev/null

work=$(mktemp -d /tmp/mlsup-bench-hang.XXXXXX)
chmod 755 "$work"  # the cluster's munged and slurmd must reach into it
cluster="$work/cluster"
runner=""
cleanup() {
  [ -z "$runner" ] || kill "$runner" 2>/dev/null || true
  tests/cluster/cluster.sh stop --dir "$cluster" --clean >/dev/null 2>&1 || true
}
trap cleanup EXIT
conf_line=$(tests/cluster/cluster.sh start --dir "$cluster" --nodes 4 --slurmd-timeout 300)
export "$conf_line"
fault() { tests/cluster/fault.sh --dir "$cluster" "$@" >/dev/null 2>&1; }

cat > "$work/campaign.yaml" <<YAML
name: bench-hang
template: $repo/templates/srun.sbatch.tmpl
vars:
  script: $repo/examples/trainer/train.py
  script_args: --steps 1000000 --step-seconds 0.1 --ckpt-every 50
slurm: {nodes: 2, ntasks_per_node: 1}
checkpoint: {complete_marker: COMPLETE, keep: 2}
heartbeat: {startup_timeout: 2m, steady_timeout: $steady, probe_timeout: $probe}
# exclusion_ttl 20s: a frozen node of an earlier trial, revived since, is usable again, so each
# replacement finds two idle nodes. (Where it must wait for a node that shared the abandoned job
# with the frozen one, Slurm frees that node only ~30 s later: its terminate message goes through
# the frozen node first. That wait is Slurm's, not mlsup's.)
policy: {backoff_initial: 1s, backoff_max: 1s, exclusion_ttl: 20s, crash_loop_restarts: 100,
         budgets: {hang: unlimited}}
poll_interval: $poll
target: {steps: 1000000}
YAML
conf="$work/campaign.yaml"
state="$work/.mlsup/bench-hang"
"$mlsup" run "$conf" > "$work/run.out" 2>&1 &
runner=$!

# True once attempt N has a job (as `mlsup status --json` shows it); sets job to it.
has_job() { job=$(attempt_job "$mlsup" "$conf" "$1"); [ -n "$job" ]; }
# True while Slurm shows job J running.
job_running() { scontrol -o show job "$1" 2>/dev/null | grep 'JobState=RUNNING' >/dev/null; }
stepping() { local s; s=$(cut -d' ' -f1 "$state/heartbeats/attempt-$1" 2>/dev/null); [ -n "$s" ] && [ "$s" -ge "$2" ] 2>/dev/null; }
# Waits until a command succeeds (at most 180 s, else the benchmark ends), polling every $poll_s seconds (0.05 unless set).
wait_for() { local end=$(( $(date +%s) + 180 )); until "$@"; do [ "$(date +%s)" -lt "$end" ] || { echo "timed out: $*" >&2; exit 1; }; sleep "${poll_s:-0.05}"; done; }
# Waits until attempt N has a job and it runs; sets job. The job's id is asked of status --json (~25
# ms of CPU) every 0.5 s; only then is Slurm polled every 0.05 s, so that the replacement's RUNNING is
# timed as finely as before and the wait for the submission takes the supervisor little CPU.
wait_running() { poll_s=0.5 wait_for has_job "$1"; wait_for job_running "$job"; }
now() { date +%s.%N; }
# Seconds from $2 to attempt $1's hang-detected event.
detected_after() {
  local t
  t=$(event_time "$mlsup" "$conf" hang-detected "$1")
  python3 -c 'import sys; print(f"{float(sys.argv[1]) - float(sys.argv[2]):.2f}")' "$t" "$2"
}

echo "steady_timeout $steady, poll_interval $poll, probe_timeout $probe, SlurmdTimeout 300"
printf '%-6s %-11s %-9s %-14s %s\n' trial fault node "detected (s)" "replacement RUNNING (s)"
: > "$work/rows"
for n in $(seq 1 "$trials"); do
  wait_running "$n"
  wait_for stepping "$n" 20
  if (( n % 2 )); then
    kind=hang node=-
    t0=$(now); fault hang-job "$job"
  else
    kind=power-loss
    node=$(scontrol show hostnames "$(scontrol -o show job "$job" | grep -o ' NodeList=[^ ]*' | cut -d= -f2)" | head -1)
    t0=$(now); fault freeze "$node"
  fi
  wait_running $((n + 1))
  replaced=$(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.2f}')" "$t0")
  detected=$(detected_after "$n" "$t0")
  printf '%-6s %-11s %-9s %-14s %s\n' "$n" "$kind" "$node" "$detected" "$replaced"
  echo "$kind $detected $replaced" >> "$work/rows"
  [ "$node" = - ] || fault revive "$node" --timeout 60
  [ "$node" = - ] || sleep 20  # until its exclusion expires
done
python3 - "$work/rows" "$steady" "$poll" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for kind in ("hang", "power-loss"):
    d = sorted(float(r[1]) for r in rows if r[0] == kind)
    rep = sorted(float(r[2]) for r in rows if r[0] == kind)
    if d:
        print(f"{kind}: detected min {d[0]:.2f} s, max {d[-1]:.2f} s; replacement RUNNING min {rep[0]:.2f} s, max {rep[-1]:.2f} s")
PY
"$mlsup" stop "$conf" >/dev/null
wait "$runner" || true
runner=""
