#!/usr/bin/env bash
# How fast mlsup reacts, with the default poll interval: from the moment Slurm shows a job ended
# (seen by an independent 20 ms poller) to the replacement's submission, over N endings that need
# no backoff (the training saves on the pre-timeout signal and exits short of its target). Also
# measures, while a job runs: job-query RPCs per pass and the supervisor's CPU use.
#   benchmarks/reaction.sh [--endings 20] [--steady 30] [--campaigns 1] [--running-poll DUR] [--node-loss]
# --running-poll DUR: the campaign's running_poll_interval (default: mlsup's, 5s); 500ms asks Slurm
# every poll while a job runs.
# --node-loss: each ending is a node crash (its slurmd and processes SIGKILLed, tests/cluster/fault.sh)
# rather than a save and exit: no end record tells, Slurm marks the node down after SlurmdTimeout
# (10 s on the private cluster) and ends the job NODE_FAIL; the hang timeout is set past that. Also
# prints the time from the crash to the submission. The node is revived and unexcluded after each.
# --steady S: how long the steady-state figures watch the running job (seconds).
# --campaigns N: the same supervisor carries N - 1 more campaigns (from the same folder), their jobs
# pending (they may begin in two hours: the local cluster runs a handful of jobs at once).
# Uses the cluster named by SLURM_CONF, or starts (and stops) a private one. MLSUP and
# MLSUP_SLURM_POLL pick the binaries (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source benchmarks/lib.sh
endings=20 steady=30 campaigns=1 running_poll="" node_loss=""
while [ $# -gt 0 ]; do
  case $1 in
    --endings) endings=$2 ;; --steady) steady=$2 ;; --campaigns) campaigns=$2 ;; --running-poll) running_poll=$2 ;;
    --node-loss) node_loss=1; shift; continue ;;
    *) echo "usage: $0 [--endings N] [--steady S] [--campaigns N] [--running-poll DUR] [--node-loss]" >&2; exit 2 ;;
  esac
  shift 2
done
mlsup=${MLSUP:-build/mlsup} poll=${MLSUP_SLURM_POLL:-build/mlsup_slurm_poll}
[ -x "$mlsup" ] && [ -x "$poll" ] || ./scripts/build.sh >/dev/null

own_cluster=""
work=$(mktemp -d /tmp/mlsup-bench-reaction.XXXXXX)
runner=""
cleanup() {
  [ -z "$runner" ] || kill "$runner" 2>/dev/null || true
  scancel --name=bench-reaction 2>/dev/null || true
  squeue -h -o '%i %j' 2>/dev/null | awk '$2 ~ /^bench-reaction-idle-/ { print $1 }' | xargs -r scancel 2>/dev/null || true
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
}
trap cleanup EXIT
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/mlsup-bench-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4 --slurmd-timeout 10)"
fi
cluster_dir=$(dirname "$SLURM_CONF")

# A node loss is left to Slurm to find (SlurmdTimeout): the hang timeout is set past it; the training
# saves every second, so that each attempt makes progress and its ending needs no backoff.
ckpt_every=0
[ -z "$node_loss" ] || ckpt_every=20
cat > "$work/campaign.yaml" <<YAML
name: bench-reaction
template: $repo/templates/srun.sbatch.tmpl
vars:
  script: $repo/examples/trainer/train.py
  script_args: --steps 1000000 --step-seconds 0.05 --ckpt-every $ckpt_every
slurm: {nodes: 1, ntasks_per_node: 1}
checkpoint: {complete_marker: COMPLETE}
target: {steps: 1000000}
YAML
[ -z "$running_poll" ] || echo "running_poll_interval: $running_poll" >> "$work/campaign.yaml"
[ -z "$node_loss" ] || printf 'heartbeat: {steady_timeout: 2m, calibrate: false}\npolicy: {budgets: {node_fail: unlimited}}\n' >> "$work/campaign.yaml"
conf="$work/campaign.yaml"
state="$work/.mlsup/bench-reaction"
pending_job_script "$work/idle.sbatch"
for i in $(seq 2 "$campaigns"); do
  printf 'name: bench-reaction-idle-%s\ntemplate: idle.sbatch\n' "$i" > "$work/idle-$i.yaml"
done
echo "-- one supervisor, $campaigns campaign(s): one with a running job, the others' jobs pending"
if [ "$campaigns" -gt 1 ]; then "$mlsup" run "$work" > "$work/run.out" 2>&1 &
else "$mlsup" run "$conf" > "$work/run.out" 2>&1 &
fi
runner=$!

# True once a complete checkpoint newer than $saved_before (the newest when the attempt began) exists.
newest_checkpoint() { ls -t "$state"/checkpoints/*/COMPLETE 2>/dev/null | head -n 1; }
checkpoint_since() { local c; c=$(newest_checkpoint); [ -n "$c" ] && [ "$c" != "$saved_before" ]; }
# True once attempt N has a job (as `mlsup status --json` shows it).
has_job() { [ -n "$(attempt_job "$mlsup" "$conf" "$1")" ]; }
# True once the event log has attempt N's submission; sets submitted_at (its time).
submission_told() { submitted_at=$(event_time "$mlsup" "$conf" submitted "$1"); [ -n "$submitted_at" ]; }
# Waits until a command succeeds (at most $limit_s seconds, 120 unless set), polling every $poll_s seconds (0.1 unless set).
wait_for() { local end=$(( $(date +%s) + ${limit_s:-120} )); until "$@"; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep "${poll_s:-0.1}"; done; }

# The others' submissions first (paced): the figures are of a fleet that waits, not of its start.
idle_pending() { [ "$(squeue -h -t PD -o '%j' | grep -c '^bench-reaction-idle-')" -ge $((campaigns - 1)) ]; }
# (sbatch goes at 2 a second: 1,000 campaigns take 500 s to submit)
[ "$campaigns" -eq 1 ] || { limit_s=$((120 + campaigns)) wait_for idle_pending && echo "($((campaigns - 1)) jobs pending)"; }
# A job submitted less than 30 s ago is looked at every poll: the window begins after that.
[ "$campaigns" -eq 1 ] || sleep 30
echo "-- steady state: a job running, $steady s"
wait_for test -s "$state/heartbeats/attempt-1"
rpc() { sdiag_count REQUEST_JOB_USER_INFO; }
ticks() { awk '{ print $14 + $15 }' "/proc/$runner/stat"; }
r0=$(rpc); c0=$(ticks); t0=$(date +%s.%N)
sleep "$steady"
r1=$(rpc); c1=$(ticks); t1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
python3 - "$r0" "$r1" "$c0" "$c1" "$t0" "$t1" "$hz" <<'PY'
import sys
r0, r1, c0, c1, t0, t1, hz = (float(x) for x in sys.argv[1:])
print(f"job-query RPCs: {r1 - r0:.0f} in {t1 - t0:.1f} s (default poll_interval 500ms)")
print(f"supervisor CPU: {(c1 - c0) / hz:.2f} s in {t1 - t0:.1f} s = {100 * (c1 - c0) / hz / (t1 - t0):.2f}% of one core")
PY

echo "-- $endings endings"
saved_before=""
: > "$work/reactions"
e0=$(rpc); et0=$(date +%s.%N)
for n in $(seq 1 "$endings"); do
  wait_for has_job "$n"
  job=$(attempt_job "$mlsup" "$conf" "$n")
  wait_for test -s "$state/heartbeats/attempt-$n"
  "$poll" --polls 3000 --interval-ms 20 "$job" > "$work/watch.$n" 2>/dev/null &
  watcher=$!
  sleep 0.5
  if [ -n "$node_loss" ]; then
    poll_s=0.5 wait_for checkpoint_since  # the attempt progressed: its ending needs no backoff
    saved_before=$(newest_checkpoint)
    node=$(squeue -h -j "$job" -o %N)
    tests/cluster/fault.sh --dir "$cluster_dir" crash "$node" >/dev/null
    lost_at=$(date +%s.%N)
  else
    scancel --batch --signal=USR1 "$job"
  fi
  # The figure is the submitted event's time (mlsup's own clock) less the end the 20 ms poller saw,
  # not when this loop notices it; so the loop polls status --json (~25 ms of CPU) only every 0.5 s,
  # taking in the measured window about the 5% of a core that a journal grep every 0.1 s took.
  poll_s=0.5 wait_for has_job $((n + 1))
  wait_for submission_told $((n + 1))
  kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null || true
  python3 - "$work/watch.$n" "$submitted_at" >> "$work/reactions" <<'PY'
import json, sys
final = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL")
ended = next(json.loads(l)["t"] for l in open(sys.argv[1])
             if '"ok":true' in l and any(j["state"] in final for j in json.loads(l)["jobs"]))
print(f"{float(sys.argv[2]) - ended:.3f}")
PY
  if [ -n "$node_loss" ]; then
    python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$lost_at" "$submitted_at" >> "$work/from-loss"
    tests/cluster/fault.sh --dir "$cluster_dir" revive "$node" >/dev/null
    "$mlsup" unexclude "$conf" "$node" --why "benchmark: revived" >/dev/null 2>&1 || true
  fi
done
e1=$(rpc); et1=$(date +%s.%N)
watched=$(cat "$work"/watch.* | wc -l)  # the 20 ms poller's own queries, one line each
python3 -c 'import sys; n, t = float(sys.argv[2]) - float(sys.argv[1]) - float(sys.argv[5]), float(sys.argv[4]) - float(sys.argv[3])
print(f"job-query RPCs over the endings, the poller'"'"'s {sys.argv[5]} taken off: {n:.0f} in {t:.1f} s = {n / t:.2f}/s")' \
  "$e0" "$e1" "$et0" "$et1" "$watched"
# Prints "WHAT, N NOUN: min, p50, [p95,] max" of the seconds in FILE: spread FILE WHAT NOUN [p95].
spread() {
  python3 - "$@" <<'PY'
import sys
path, what, noun = sys.argv[1:4]
r = sorted(float(x) for x in open(path) if x.strip())
p = lambda q: r[min(len(r) - 1, int(q * len(r)))]
p95 = f"p95 {p(0.95):.3f} s, " if sys.argv[4:] == ["p95"] else ""
print(f"{what}, {len(r)} {noun}: min {r[0]:.3f} s, p50 {p(0.5):.3f} s, {p95}max {r[-1]:.3f} s")
PY
}
spread "$work/reactions" "reaction (Slurm shows the end -> replacement submitted)" endings p95
[ -z "$node_loss" ] || spread "$work/from-loss" "node crash -> replacement submitted" losses
"$mlsup" stop "$conf" >/dev/null
[ "$campaigns" -eq 1 ] || { sleep 2; kill -TERM "$runner"; }  # the others' jobs pend on: let them go
wait "$runner" || true
runner=""
