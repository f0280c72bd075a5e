#!/usr/bin/env bash
# What one mlsup run costs with 1, 10, 100 campaigns: each campaign with a long journal (RECORDS
# records: a thousand preempted attempts) and its job pending (it may begin in two hours), so that
# every pass is idle. Over a quiet
# window it measures the Slurm job queries per pass (sdiag's REQUEST_JOB_USER_INFO over the
# supervisor's own pass count), the supervisor's CPU share and RSS, its campaign passes' duration, and
# the files its idle passes wrote besides the leases. The window opens once every lease has been
# renewed after the submissions (a submission holds the lease for sbatch's 120 s and half the lease,
# lease_ttl 2 minutes by default), so that the CPU share counts the steady renewals (each lease once
# half of it is gone: every 60 s, so the 60 s window holds one of each); "lease files" is how many
# leases were renewed in it.
# --quick opens the window 3 s after the submissions instead (no renewal in it). Prints a table; then,
# with the same fleets' jobs still pending, one `mlsup tick` over each: its wall time, its job
# queries (sdiag) and its file system calls (strace -c, a second tick), and `mlsup status --json` over it.
# Also per count: Slurm's RPCs of every type in the window (sdiag by message type, the benchmark's own
# and the slurmd's left out) and the supervisor's file system calls per second (strace -c, 20 s after
# the window), and while the fleet's first jobs are submitted, how long that took and the
# supervisor's peak threads and RSS (sampled every second).
#   benchmarks/many-campaigns.sh [--counts "1 10 100"] [--records 3000] [--window 60] [--quick]
# Uses the cluster named by SLURM_CONF, or starts (and stops) a private one.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh
counts="1 10 100" records=3000 window=60 quick=""
while [ $# -gt 0 ]; do
  case $1 in
    --counts) counts=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "usage: $0 [--counts \"1 10 100\"] [--records N] [--window S] [--quick]" >&2; exit 2 ;;
  esac
done
mlsup=${MLSUP:-build/mlsup}
[ -x "$mlsup" ] || ./scripts/build.sh >/dev/null

cluster_unless_given --nodes 4
work=$(mktemp -d /tmp/mlsup-bench-many.XXXXXX)
runner=""
cleanup() {
  [ -z "$runner" ] || kill -9 "$runner" 2>/dev/null || true
  scancel -u "$(id -un)" 2>/dev/null || true
  rm -rf "$work"
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
}
trap cleanup EXIT

# A folder of n campaigns, each with a journal of about $records records: attempts that were
# preempted and resubmitted, a month ago (intent, submission, ending: three records each).
make_fleet() {
  local n=$1 dir=$2
  mkdir -p "$dir"
  pending_job_script "$dir/job.sbatch"
  for i in $(seq 1 "$n"); do
    local name="bench-$n-$i"
    printf 'name: %s\ntemplate: job.sbatch\npoll_interval: 1s\n' "$name" > "$dir/$name.yaml"
    mkdir -p "$dir/.mlsup/$name"
    preempted_journal "$dir/.mlsup/$name/journal.jsonl" "$name" "$records" "$i"
  done
}

# The supervisor's CPU seconds so far (user + system).
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
rpc() { sdiag_count REQUEST_JOB_USER_INFO; }
# sdiag's RPC counts by message type, "TYPE COUNT" a line.
rpc_types() { sdiag | awk '/by message type/ { on = 1; next } /^$/ { on = 0 } on && /count:/ { for (i = 1; i <= NF; i++) if ($i ~ /^count:/) { sub("count:", "", $i); print $1, $i } }'; }
# The last stats line's fields: passes queries campaign-passes all-ms longest-ms.
stats() {
  kill -USR1 "$runner"; sleep 0.5
  grep "mlsup: stats:" "$1" | tail -n 1 | sed -E 's/[^0-9 ]//g' | awk '{ print $1, $2, $3, $4, $5 }'
}

ticks="" rpcs="" fsops="" subs=""
printf '%-10s %-8s %-14s %-10s %-8s %-14s %-16s %-14s %-12s\n' campaigns records "queries/pass" "cpu %" "rss MB" "pass mean ms" "longest ms (all)" "files written" "lease files"
for n in $counts; do
  dir="$work/fleet-$n"
  make_fleet "$n" "$dir"
  "$mlsup" run "$dir" > "$dir/run.out" 2>&1 &
  runner=$!
  # Every campaign submitted and pending (sbatch calls are paced: about one a second for a fleet),
  # the supervisor's threads and RSS sampled meanwhile.
  sub0=$(date +%s.%N) peak_threads=0 peak_rss=0
  for _ in $(seq 1 $((n * 2 > 120 ? n * 2 : 120))); do
    peak_threads=$(awk -v p="$peak_threads" '$1 == "Threads:" { print ($2 > p ? $2 : p) }' "/proc/$runner/status")
    peak_rss=$(awk -v p="$peak_rss" '$1 == "VmRSS:" { print ($2 > p ? $2 : p) }' "/proc/$runner/status")
    [ "$(squeue -h -u "$(id -un)" -t PD | wc -l)" -ge "$n" ] && break
    sleep 1
  done
  subs+=$(awk -v n="$n" -v a="$sub0" -v b="$(date +%s.%N)" -v t="$peak_threads" -v r="$peak_rss" \
    'BEGIN { printf "%-10s %-12.1f %-14s %-10.1f", n, b - a, t, r / 1024 }')$'\n'
  # Every lease renewed since: the steady state (at most 150 s after the last submission).
  touch "$work/submitted"
  [ -z "$quick" ] || sleep 2
  for _ in $( [ -n "$quick" ] || seq 1 300); do
    [ "$(find "$dir/.mlsup" -name lease.json -newer "$work/submitted" | wc -l)" -ge "$n" ] && break
    sleep 1
  done
  sleep 1
  touch "$work/mark"
  read -r p0 q0 c0 ms0 _ < <(stats "$dir/run.out")
  rpc_types > "$dir/rpc.0"
  s0=$(rpc); cpu0=$(cpu_seconds "$runner"); t0=$(date +%s.%N)
  sleep "$window"
  read -r p1 q1 c1 ms1 longest < <(stats "$dir/run.out")
  s1=$(rpc); cpu1=$(cpu_seconds "$runner"); t1=$(date +%s.%N)
  rpc_types > "$dir/rpc.1"
  written=$(find "$dir/.mlsup" -type f -newer "$work/mark" ! -name 'lease.json*' | wc -l)
  leases=$(find "$dir/.mlsup" -type f -newer "$work/mark" -name lease.json | wc -l)
  python3 - "$n" "$records" "$p0" "$p1" "$s0" "$s1" "$cpu0" "$cpu1" "$t0" "$t1" "$(rss_kb "$runner")" "$c0" "$c1" "$ms0" "$ms1" "$longest" "$written" "$leases" <<'PY'
import sys
n, records, p0, p1, s0, s1 = (int(x) for x in sys.argv[1:7])
cpu0, cpu1, t0, t1 = (float(x) for x in sys.argv[7:11])
rss, c0, c1, ms0, ms1, longest, written, leases = (int(x) for x in sys.argv[11:19])
per_pass = (s1 - s0) / max(1, p1 - p0)
share = 100 * (cpu1 - cpu0) / (t1 - t0)
mean = (ms1 - ms0) / max(1, c1 - c0)
print(f"{n:<10} {records:<8} {per_pass:<14.2f} {share:<10.2f} {rss / 1024:<8.1f} {mean:<14.1f} {longest:<16} {written:<14} {leases:<12}")
PY
  # Slurm's RPCs in the window by type, without this benchmark's (sdiag) and the slurmd's (their
  # registrations, epilogs): the cluster is private, so the rest is the supervisor's.
  rpcs+=$(python3 - "$n" "$dir/rpc.0" "$dir/rpc.1" "$t0" "$t1" <<'PY'
import sys
n, before, after, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
read = lambda p: {l.split()[0]: int(l.split()[1]) for l in open(p) if l.strip()}
b, a = read(before), read(after)
d = {k: v - b.get(k, 0) for k, v in a.items() if v - b.get(k, 0) > 0}
others = ("REQUEST_STATS_INFO", "MESSAGE_NODE_REGISTRATION_STATUS", "MESSAGE_EPILOG_COMPLETE", "REQUEST_COMPLETE_BATCH_SCRIPT")
own = {k: v for k, v in d.items() if k not in others and v > 0}
t = t1 - t0
print(f"{n:<10} {sum(own.values()) / t:<10.2f} " + ", ".join(f"{k} {v} ({v / t:.2f}/s)" for k, v in sorted(own.items(), key=lambda x: -x[1])))
PY
)$'\n'
  # The supervisor's file system calls per second, counted by strace over a window of its own (strace
  # slows the process: not in the CPU window above).
  timeout -s INT 20 strace -f -c -o "$dir/run.strace" -p "$runner" -e trace=fsync,fdatasync,rename,openat,newfstatat,statx,write > /dev/null 2>&1 || true
  fsops+=$(python3 - "$n" "$dir/run.strace" <<'PY'
import sys
calls = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 5 and f[-1].isidentifier() and f[3].isdigit():
        calls[f[-1]] = int(f[3])
t = 20.0
g = lambda *k: sum(calls.get(x, 0) for x in k) / t
print(f"{sys.argv[1]:<10} {g('openat'):<8.1f} {g('newfstatat', 'statx'):<8.1f} {g('fsync', 'fdatasync'):<8.2f} {g('rename'):<8.2f} {g('write'):<8.2f}")
PY
)$'\n'
  kill -TERM "$runner"; wait "$runner" || true; runner=""
  # The same fleet under cron: one `mlsup tick` over it, its jobs still pending (nothing to do), timed
  # alone, then again under strace for its file system calls.
  s0=$(rpc); t0=$(date +%s.%N)
  "$mlsup" tick "$dir" > "$dir/tick.out" 2>&1 || true
  t1=$(date +%s.%N); s1=$(rpc)
  "$mlsup" status "$dir" --json > /dev/null 2>&1 || true
  t2=$(date +%s.%N)
  strace -f -c -o "$dir/tick.strace" -e trace=fsync,fdatasync,rename,openat,newfstatat,statx "$mlsup" tick "$dir" > /dev/null 2>&1 || true
  ticks+=$(python3 - "$n" "$t0" "$t1" "$s0" "$s1" "$dir/tick.strace" "$t2" <<'PY'
import sys
n, t0, t1, s0, s1, trace = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
t2 = float(sys.argv[7])
calls = {}
for line in open(trace):
    f = line.split()
    if len(f) >= 5 and f[-1].isidentifier() and f[3].isdigit():
        calls[f[-1]] = int(f[3])
syncs = calls.get("fsync", 0) + calls.get("fdatasync", 0)
opens = calls.get("openat", 0)
stats = calls.get("newfstatat", 0) + calls.get("statx", 0)
print(f"{n:<10} {t1 - t0:<10.2f} {s1 - s0:<12} {syncs:<8} {calls.get('rename', 0):<8} {opens:<8} {stats:<8} {t2 - t1:<10.2f}")
PY
)$'\n'
  scancel -u "$(id -un)" 2>/dev/null || true
  sleep 2
done
printf '\n%-10s %-12s %-14s %-10s\n' "submitted" "in s" "peak threads" "peak RSS MB"
printf '%s' "$subs"
printf '\n%-10s %-10s %s\n' "rpcs of" "all /s" "by type, in the window (the benchmark's sdiag and the slurmd's messages left out)"
printf '%s' "$rpcs"
printf '\n%-10s %-8s %-8s %-8s %-8s %-8s\n' "fs calls/s" openat stat fsync rename write
printf '%s' "$fsops"
printf '\n%-10s %-10s %-12s %-8s %-8s %-8s %-8s %-10s\n' "tick over" "wall s" "job queries" fsync rename openat stat "status s"
printf '%s' "$ticks"
