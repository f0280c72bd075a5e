#!/usr/bin/env bash
# What one poll costs slurmctld with many unrelated jobs in the queue: submits N held jobs of
# another user, then polls one watched job of ours with each query scope of the libslurm client,
# once with a quiet queue and once while the queue keeps changing. Prints a table.
#   benchmarks/slurm-query.sh [--jobs 1000] [--polls 200]
# Uses the cluster named by SLURM_CONF, or starts (and stops) a private one.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=1000 polls=200
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --polls) polls=$2; shift 2 ;;
    *) echo "usage: $0 [--jobs N] [--polls N]" >&2; exit 2 ;;
  esac
done
poll=${MLSUP_SLURM_POLL:-build/mlsup_slurm_poll}  # MLSUP_SLURM_POLL picks the poller
[ -x "$poll" ] || ./scripts/build.sh >/dev/null

own_cluster=""
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/mlsup-bench-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4)"
fi
churn_pid=""
cleanup() {
  [ -z "$churn_pid" ] || kill "$churn_pid" 2>/dev/null || true
  scancel -u mlsupbench 2>/dev/null || true
  [ -n "${watched:-}" ] && scancel "$watched" 2>/dev/null || true
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
}
trap cleanup EXIT

id -u mlsupbench >/dev/null 2>&1 || useradd --system --no-create-home mlsupbench
echo "submitting $jobs held jobs of user mlsupbench ..." >&2
seq "$jobs" | xargs -P 4 -I{} runuser -u mlsupbench -- sbatch --hold -o /dev/null -D /tmp --wrap true >/dev/null
watched=$(sbatch --parsable -N1 -o /dev/null --wrap 'sleep 3600')
sleep 2
queued=$(squeue -h | wc -l)

# total_time and count of an RPC type in sdiag.
rpc() { sdiag | awk -v t="$1" '$1 == t { sub("count:","",$4); sub("total_time:","",$6); print $4, $6; f=1 } END { if (!f) print 0, 0 }'; }

# Runs the poller for one scope; prints client-side p50/p95 and slurmctld's mean time per RPC.
measure() {
  local scope=$1 type=$2 c0 t0 c1 t1 stats
  read -r c0 t0 < <(rpc "$type")
  stats=$("$poll" --scope "$scope" --polls "$polls" --interval-ms 50 "$watched" 2>&1 >/dev/null | tail -1)
  read -r c1 t1 < <(rpc "$type")
  local n=$((c1 - c0))
  printf '%-6s %-22s rpcs=%-5s slurmctld_us_per_rpc=%-6s %s\n' "$scope" "$type" "$n" "$(( n > 0 ? (t1 - t0) / n : 0 ))" "$stats"
}

run_all() {
  measure user REQUEST_JOB_USER_INFO
  measure all REQUEST_JOB_INFO
}

echo "queue: $queued jobs ($jobs held, of another user), polls per case: $polls"
echo "-- quiet queue (nothing changes between polls)"
run_all
echo "-- busy queue (one unrelated job changes every 50 ms)"
bench_job=$(squeue -h -u mlsupbench -o %i | head -1)
( i=0; while true; do scontrol update JobId="$bench_job" Comment="c$i" 2>/dev/null; i=$((i + 1)); sleep 0.05; done ) &
churn_pid=$!
run_all
