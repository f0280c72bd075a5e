#!/usr/bin/env bash
# What a supervisor costs the file system while its training simply runs: one campaign, its job
# stepping every STEP seconds (0.05; heartbeat every step), the default poll interval (0.5 s), nothing
# to decide.
# Over a window of W seconds it counts the system calls of `mlsup run` that touch files (strace -c
# -f: openat, stat family, fsync/fdatasync, rename, write) and the passes made (the supervisor's own
# metrics), and prints them per pass and per second. The lease's renewal (every lease_ttl/2, 60 s by
# default: one fsync'd write) falls in a window once at most when it is shorter than that.
#   benchmarks/steady-fs.sh [--window 40] [--settle 10] [--step-seconds 0.05]
# Uses the cluster named by SLURM_CONF, or starts (and stops) a private one. MLSUP picks the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source benchmarks/lib.sh
window=40 settle=10 step_seconds=0.05
while [ $# -gt 0 ]; do
  case $1 in
    --window) window=$2 ;; --settle) settle=$2 ;; --step-seconds) step_seconds=$2 ;;
    *) echo "usage: $0 [--window S] [--settle S] [--step-seconds S]" >&2; exit 2 ;;
  esac
  shift 2
done
mlsup=${MLSUP:-build/mlsup}
[ -x "$mlsup" ] || ./scripts/build.sh >/dev/null
command -v strace >/dev/null || { echo "$0: needs strace (apt-get install strace)" >&2; exit 2; }

own_cluster=""
work=$(mktemp -d /tmp/mlsup-bench-steady.XXXXXX)
runner="" tracer=""
cleanup() {
  [ -z "$tracer" ] || kill "$tracer" 2>/dev/null || true
  [ -z "$runner" ] || { kill "$runner" 2>/dev/null; wait "$runner" 2>/dev/null; } || true
  scancel --name=bench-steady 2>/dev/null || true
  for _ in $(seq 20); do [ -z "$(squeue -h --name=bench-steady 2>/dev/null)" ] && break; sleep 0.5; done
  rm -rf "$work"
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
}
trap cleanup EXIT
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/mlsup-bench-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4)"
fi

cat > "$work/campaign.yaml" <<YAML
name: bench-steady
template: $repo/templates/srun.sbatch.tmpl
vars:
  script: $repo/examples/trainer/train.py
  script_args: --steps 1000000 --step-seconds $step_seconds --ckpt-every 0
slurm: {nodes: 1, ntasks_per_node: 1, time: "00:30:00"}
checkpoint: {complete_marker: COMPLETE}
target: {steps: 1000000}
YAML
conf="$work/campaign.yaml"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$mlsup" run "$conf" --metrics-listen "127.0.0.1:$port" > "$work/run.out" 2>&1 &
runner=$!

# The passes the supervisor has made of the campaign (its metrics).
passes() {
  /usr/bin/python3 - "$port" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode()
print(sum(int(float(l.split()[-1])) for l in text.splitlines() if l.startswith("mlsup_campaign_pass_duration_seconds_count")))
PY
}
# The step the running job's heartbeat shows (status --json), nothing before it steps.
step() { mlsup_status_query "$mlsup" "$conf" 's.get("step")' 2>/dev/null || true; }
end=$(( $(date +%s) + 120 ))
until [ -n "$(step)" ] && [ "$(step)" != 0 ]; do
  [ "$(date +%s)" -lt "$end" ] || { echo "$0: the job did not step within 120 s" >&2; cat "$work/run.out" >&2; exit 1; }
  sleep 1
done
sleep "$settle"  # the first passes of a running job decide (started, first step); then it is steady

before=$(passes)
strace -f -y -qq -o "$work/trace" \
  -e trace=openat,open,stat,newfstatat,statx,lstat,fsync,fdatasync,rename,renameat,renameat2,write,unlink -p "$runner" &
tracer=$!
sleep "$window"
kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true; tracer=""
after=$(passes)
printf 'steady state: one campaign, its job stepping every %s s, %s s window, %s passes (poll 0.5 s)\n' \
  "$step_seconds" "$window" "$(( after - before ))"
# Every call on a file (a write to a pipe or a socket is none), by call, and the durable ones by file.
/usr/bin/python3 - "$work/trace" "$(( after - before ))" "$window" "$work/" <<'PY'
import collections, re, sys
trace, passes, window, work = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
calls, durable = collections.Counter(), collections.Counter()
for line in open(trace):
    m = re.match(r"(?:\d+ +)?(\w+)\((.*)", line)
    if not m or "resumed>" in line:
        continue
    name, args = m.groups()
    path = re.search(r'<(/[^>]*)>|"(/[^"]*)"', args)
    if not path:
        continue
    path = path.group(1) or path.group(2)
    if name == "write" and not path.startswith("/"):
        continue
    if name in ("write",) and ("run.out" in path or path.startswith("/dev/")):
        continue  # the supervisor's own console
    calls[name] += 1
    if name in ("fsync", "fdatasync", "rename", "renameat", "renameat2"):
        short = re.sub(r"\.tmp\.\w+$", "", path.replace(work, "")).split("/")[-1] or path
        durable[(name, short)] += 1
print("%-12s %10s %10s %10s" % ("call", "calls", "per_pass", "per_second"))
for name in sorted(calls):
    print("%-12s %10d %10.2f %10.2f" % (name, calls[name], calls[name] / max(passes, 1), calls[name] / window))
for (name, short), n in sorted(durable.items()):
    print("durable: %s %s %d" % (name, short, n))
print("fsync per pass: %.3f (memory.json and status.json: %d)" % (
    (calls["fsync"] + calls["fdatasync"]) / max(passes, 1),
    sum(n for (name, short), n in durable.items() if name.startswith("f") and short in ("memory.json", "status.json"))))
PY
