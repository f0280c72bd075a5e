#!/usr/bin/env bash
# What a long journal costs the processes that open a campaign: one campaign whose journal holds
# --records records (a chain of months: preempted attempts, three records each) beside a fresh one
# (a few records), their jobs pending. Per campaign: the first `mlsup tick` (it replays the journal
# whole, then keeps the replay snapshot once the journal has 200 records or more), the median of
# --ticks more (the snapshot and the records after it), the peak RSS of a tick, `mlsup status --json`
# (it reads every attempt), and the snapshot's size.
#   benchmarks/long-journal.sh [--records 100000] [--ticks 5]
# Uses the cluster named by SLURM_CONF, or starts (and stops) a private one.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh
records=100000 ticks=5
while [ $# -gt 0 ]; do
  case $1 in
    --records) records=$2; shift 2 ;;
    --ticks) ticks=$2; shift 2 ;;
    *) echo "usage: $0 [--records N] [--ticks N]" >&2; exit 2 ;;
  esac
done
mlsup=${MLSUP:-build/mlsup}
[ -x "$mlsup" ] || ./scripts/build.sh >/dev/null

cluster_unless_given --nodes 4
work=$(mktemp -d /tmp/mlsup-bench-journal.XXXXXX)
cleanup() {
  scancel -u "$(id -un)" 2>/dev/null || true
  rm -rf "$work"
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
}
trap cleanup EXIT

pending_job_script "$work/job.sbatch"
# Seconds and peak KB of one command: timed CMD...
timed() { /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -n 1; }

printf '%-10s %-9s %-12s %-14s %-10s %-10s %-10s\n' campaign records "first tick s" "tick s (median)" "tick MB" "status s" "replay KB"
for name in fresh long; do
  n=$([ "$name" = long ] && echo "$records" || echo 3)
  printf 'name: %s\ntemplate: job.sbatch\npoll_interval: 1s\n' "$name" > "$work/$name.yaml"
  mkdir -p "$work/.mlsup/$name"
  preempted_journal "$work/.mlsup/$name/journal.jsonl" "$name" "$n" 1
  read -r first _ < <(timed "$mlsup" tick "$work/$name.yaml")
  walls="" peak=0
  for _ in $(seq 1 "$ticks"); do
    read -r wall kb < <(timed "$mlsup" tick "$work/$name.yaml")
    walls+="$wall "
    [ "$kb" -gt "$peak" ] && peak=$kb
  done
  read -r status _ < <(timed "$mlsup" status "$work/$name.yaml" --json)
  replay=$(stat -c %s "$work/.mlsup/$name/replay.json" 2>/dev/null || echo 0)
  /usr/bin/python3 - "$name" "$n" "$first" "$peak" "$status" "$replay" $walls <<'PY'
import statistics, sys
name, n, first, peak, status, replay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
walls = [float(x) for x in sys.argv[7:]]
print(f"{name:<10} {n:<9} {first:<12.2f} {statistics.median(walls):<14.2f} {peak / 1024:<10.1f} {status:<10.2f} {replay / 1024:<10.1f}")
PY
done
