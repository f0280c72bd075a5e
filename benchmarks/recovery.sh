#!/usr/bin/env bash
# Time lost per fault: one 2-node campaign of 300 steps of 0.05 s (15 s of ideal work, a checkpoint
# every 20 steps, heartbeat.steady_timeout 8 s, otherwise defaults: 10 s initial backoff) run clean,
# with a trainer crash at step 150 in the first attempt, and with a sticky bad node (the lowest, where
# Slurm puts rank 0 first; the trainer crashes at start whenever it runs there). Prints, per case,
# mlsup run's wall time, the time lost against the clean run, the attempts and the seconds between
# each ending and the next submission (mlsup's waiting).
#   benchmarks/recovery.sh [--repeat N]
# MLSUP picks the binary (default build/mlsup). Uses the cluster named by SLURM_CONF, or starts (and
# stops) a private one.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
repeat=1
[ "${1:-}" = "--repeat" ] && repeat=$2
mlsup=$(realpath "${MLSUP:-build/mlsup}")
own_cluster=""
work=$(mktemp -d /tmp/mlsup-bench-recovery.XXXXXX)
cleanup() {
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/mlsup-bench-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4 --slurmd-timeout 10)"
fi
export MLSUP_FAULT_DIR=$work/faults
mkdir -p "$MLSUP_FAULT_DIR/sticky-bad"
bad=$(sinfo -h -N -o '%N' | sort -uV | head -1)

# Runs one campaign (name, trainer arguments); prints "wall attempts gaps".
campaign() {
  local dir=$work/$1
  mkdir -p "$dir"
  cat > "$dir/campaign.yaml" <<YAML
name: bench-recovery-$1-$$
template: $repo/templates/srun.sbatch.tmpl
vars: {script: $repo/examples/trainer/train.py, script_args: --steps 300 --step-seconds 0.05 --ckpt-every 20 $2}
slurm: {nodes: 2, ntasks_per_node: 1, time: "00:10:00"}
checkpoint: {layout: glob, complete_marker: COMPLETE}
heartbeat: {steady_timeout: 8s}
YAML
  local t0 t1
  t0=$(date +%s.%N)
  timeout -s KILL 300 "$mlsup" run "$dir/campaign.yaml" > "$dir/run.out" 2>&1
  t1=$(date +%s.%N)
  "$mlsup" events "$dir/campaign.yaml" --json | python3 -c 'import json, sys
t0, t1 = float(sys.argv[1]), float(sys.argv[2])
ev = [json.loads(l) for l in sys.stdin if l.strip()]
ended = {e["attempt"]: e["time"] for e in ev if e.get("event") == "attempt-ended"}
sub = {e["attempt"]: e["time"] for e in ev if e.get("event") == "submitted"}
gaps = ["%.1f" % (sub[n + 1] - ended[n]) for n in sorted(ended) if n + 1 in sub]
print("%.1f %d %s" % (t1 - t0, len(sub), ",".join(gaps) or "-"))' "$t0" "$t1"
}

printf '%-8s %6s %6s %8s  %s\n' case wall lost attempts "ending->next submission (s)"
for i in $(seq 1 "$repeat"); do
  read -r clean n gaps < <(campaign "clean$i" "")
  printf '%-8s %6.1f %6s %8s  %s\n' clean "$clean" - "$n" "$gaps"
  read -r wall n gaps < <(campaign "crash$i" "--fail-at-step 150 --fail-attempts 1")
  printf '%-8s %6.1f %6.1f %8s  %s\n' crash "$wall" "$(echo "$wall - $clean" | bc)" "$n" "$gaps"
  : > "$MLSUP_FAULT_DIR/sticky-bad/$bad"
  read -r wall n gaps < <(campaign "sticky$i" "")
  rm -f "$MLSUP_FAULT_DIR/sticky-bad/$bad"
  printf '%-8s %6.1f %6.1f %8s  %s\n' sticky "$wall" "$(echo "$wall - $clean" | bc)" "$n" "$gaps"
done
