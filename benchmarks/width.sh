#!/usr/bin/env bash
# What one node's fault costs as the job gets wider: a campaign of WIDTH nodes (one rank per node,
# the test trainer: STEPS steps of 0.2 s, a checkpoint every 10, heartbeat.steady_timeout 8 s), run
# clean, with one rank crashing (the last rank exits 1 at the middle step, in attempt 1) and with a
# power loss (`fault.sh freeze` of the last training node, which is not the batch host, once the
# heartbeat reaches the middle step: its slurmd and processes SIGSTOPped, thawed after the run),
# each with and without a spare node (slurm.spare_nodes).
#   benchmarks/width.sh [--widths 2,16,64] [--spares 0,1] [--cases clean,crash,powerloss]
#                       [--repeat N] [--steps N] [--slurmd-timeout S]
# --cases run in the order given, per width and spares; one may come more than once (clean,powerloss,
# powerloss: two power losses against one clean run). --repeat runs the whole list N times.
# Prints a row per run: its wall time and the time lost against the clean run of the same width and
# spares; the training's own start-up in the run that finished it (restart_s: its first process
# started -> its last rank's first step, from the trainer's log; a clean run's is its one start) and
# the time lost less that (lost_less_rs: what detection, mlsup and Slurm cost, which a wider job
# should not multiply; the start-up of N Python ranks on the machine's few cores grows with N);
# the attempts and whether the last ran in the first one's job; the nodes excluded and how
# many of them were healthy (every excluded node but the one the fault hit); the job-step creations
# in slurmctld beside the training's own steps (sdiag's REQUEST_JOB_STEP_CREATE over the run, less
# one per attempt: the probes' steps, 0 for a run without a hang); the restart split as
# detect+react+start (the fault -> mlsup's attempt-ended event -> the next submission or hand-over
# -> the next run's start: Slurm's StartTime for a new job, whole seconds, or the claimed event for
# a run in the same job; detect counts from the freeze's end, and the test trainer's other ranks go on
# until they need the frozen one); how long `fault.sh freeze` took; mlsup's own CPU seconds and peak RSS (its children, sbatch and the probes'
# sruns, not counted); and whether the result equals a failure-free run's.
# Starts (and stops) a private cluster of the widest width + 2 slurmd, with Slurm's default
# SlurmdTimeout of 300 s unless --slurmd-timeout says: with a short one, Slurm finds a frozen node of
# a wide job (whose steps are slow on one machine) and takes it out of the job before mlsup's probe. MLSUP picks the binary (default build/mlsup); MLSUP_BENCH_KEEP=1 keeps
# the runs' folders. Widths 2, 16 and 64 take about 25 minutes on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
repo=$PWD
source benchmarks/lib.sh
widths=2,16,64 spares=0,1 cases=clean,crash,powerloss repeat=1 steps=150 slurmd_timeout=300
usage() {
  echo "usage: $0 [--widths LIST] [--spares LIST] [--cases LIST] [--repeat N] [--steps N] [--slurmd-timeout S]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --widths) widths=$2; shift 2 ;;
    --spares) spares=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --slurmd-timeout) slurmd_timeout=$2; shift 2 ;;
    *) usage ;;
  esac
done
for c in ${cases//,/ }; do
  case $c in clean | crash | powerloss) ;; *) echo "width.sh: unknown case $c (clean, crash, powerloss)" >&2; exit 2 ;; esac
done
mlsup=$(realpath "${MLSUP:-build/mlsup}")
trainer=$repo/examples/trainer/train.py
middle=$((steps / 2))
widest=$(tr ',' '\n' <<< "$widths" | sort -n | tail -1)
work=$(mktemp -d /tmp/mlsup-bench-width.XXXXXX)
chmod 0755 "$work"
cluster=$(mktemp -d /tmp/mlsup-bench-width-cluster.XXXXXX)
cleanup() {
  [ -z "${injector:-}" ] || kill "$injector" 2>/dev/null
  tests/cluster/cluster.sh stop --dir "$cluster" --clean >/dev/null 2>&1 || true
  if [ -n "${MLSUP_BENCH_KEEP:-}" ]; then echo "width.sh: the runs' folders are kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)
conf_line=$(tests/cluster/cluster.sh start --dir "$cluster" --nodes $((widest + 2)) --slurmd-timeout "$slurmd_timeout") ||
  { echo "width.sh: the cluster of $((widest + 2)) slurmd did not start" >&2; exit 1; }
export "$conf_line"
echo "cluster: $((widest + 2)) slurmd up in $(( $(date +%s) - t0 )) s, SlurmdTimeout=$slurmd_timeout," \
  "TreeWidth=$(scontrol show config | awk '$1 == "TreeWidth" { print $3 }'); $steps steps of 0.2 s, fault at step $middle"

# slurmctld's count of job-step creations so far.
step_creations() { sdiag_count REQUEST_JOB_STEP_CREATE; }

# The nodes the training of attempt $2 runs on, in rank order, for the campaign in folder $1; with
# spare nodes ($3 > 0) nothing until the claim named them (the job's own nodes include the spares).
training_nodes() {
  "$mlsup" status "$1/campaign.yaml" --json | /usr/bin/python3 -c 'import json, subprocess, sys
s = json.load(sys.stdin)
run = [a for a in s["history"] if a["number"] == int(sys.argv[1])]
nodes = (run[0].get("step_nodes") if run else None) or (s.get("nodes") if sys.argv[2] == "0" else "") or ""
if isinstance(nodes, list): nodes = ",".join(nodes)
if nodes: print(subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True).stdout, end="")' "$2" "${3:-0}"
}

# Beside the run in folder $1 ($4 spare nodes): once attempt 1's heartbeat reaches step $2 - 1, with $3 = freeze
# freezes the last training node (the last rank's, looked up before), and notes in $1/fault when the
# fault was in place, the node, $3 and when it began (a freeze takes a while on a wide cluster).
injector_loop() {
  local dir=$1 at=$2 how=$3 spare=$4 hb="" node="" t
  until [ -n "$hb" ] && [ -n "$node" ]; do
    hb=$(ls "$dir"/.mlsup/*/heartbeats/attempt-1 2>/dev/null | head -1)
    [ -z "$hb" ] || node=$(training_nodes "$dir" 1 "$spare" | tail -1)
    sleep 0.2
  done
  until [ "$(cut -d' ' -f1 "$hb" 2>/dev/null || echo 0)" -ge $((at - 1)) ] 2>/dev/null; do sleep 0.05; done
  [ "$how" = freeze ] || sleep 0.2  # the crash comes with the next step
  t=$(date +%s.%N)
  [ "$how" != freeze ] || tests/cluster/fault.sh --dir "$cluster" freeze "$node" >/dev/null 2>&1
  echo "$(date +%s.%N) $node $how $t" > "$dir/fault"
}

# Runs mlsup run on $1 and prints "its own CPU seconds, its peak RSS in kB" (read from /proc while
# it runs: its children are not counted); its output goes to $2.
measured_run() {
  /usr/bin/python3 - "$mlsup" "$1" "$2" <<'PY'
import os, subprocess, sys, time
hz = os.sysconf("SC_CLK_TCK")
with open(sys.argv[3], "w") as out:
    p = subprocess.Popen([sys.argv[1], "run", sys.argv[2]], stdout=out, stderr=subprocess.STDOUT)
    cpu = hwm = 0
    deadline = time.time() + 600
    while p.poll() is None and time.time() < deadline:
        try:
            f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
            cpu = (int(f[11]) + int(f[12])) / hz
            hwm = max(hwm, int(next(l.split()[1] for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM:"))))
        except (OSError, StopIteration, ValueError):
            pass
        time.sleep(0.2)
    if p.poll() is None: p.kill()
    p.wait()
print(f"{cpu:.2f} {hwm}")
PY
}

# After a run: thaws the frozen node, resumes nodes Slurm drained for a kill that failed, and waits
# up to 90 s until every node is idle, so that the next run starts as the first did.
settle() {
  [ ! -f "$1/fault" ] || read -r _ node how _ < "$1/fault"
  [ "${how:-}" != freeze ] || tests/cluster/fault.sh --dir "$cluster" revive "$node" --timeout 60 >/dev/null 2>&1
  nodes_idle_again 180 width.sh
}

# One run: width, spares, case, the clean wall of its width and spares (empty for clean); prints
# its row and, for clean, sets clean_wall.
run() {
  local width=$1 spare=$2 case=$3 clean=$4 dir args="" s0 s1 t1 usage
  seq_no=$((seq_no + 1))
  dir=$work/$seq_no-w$width-s$spare-$case
  mkdir -p "$dir"
  [ "$case" != crash ] || args="--fail-at-step $middle --fail-attempts 1 --fault-ranks $((width - 1))"
  cat > "$dir/campaign.yaml" <<YAML
name: bench-width-$seq_no-$$
template: $repo/templates/srun.sbatch.tmpl
vars: {script: $trainer, script_args: --steps $steps --step-seconds 0.2 --ckpt-every 10 $args}
slurm: {nodes: $width, ntasks_per_node: 1, time: "00:20:00", spare_nodes: $spare}
checkpoint: {layout: glob, complete_marker: COMPLETE}
heartbeat: {steady_timeout: 8s, save_timeout: 15s}
target: {steps: $steps}
YAML
  injector=""
  case $case in
    crash) injector_loop "$dir" "$middle" crash "$spare" & injector=$! ;;
    powerloss) injector_loop "$dir" "$middle" freeze "$spare" & injector=$! ;;
  esac
  s0=$(step_creations)
  t0=$(date +%s.%N)
  usage=$(measured_run "$dir/campaign.yaml" "$dir/run.out")
  t1=$(date +%s.%N)
  s1=$(step_creations)
  [ -z "$injector" ] || { kill "$injector" 2>/dev/null; wait "$injector" 2>/dev/null; }
  injector=""
  "$mlsup" status "$dir/campaign.yaml" --json > "$dir/status.json"
  "$mlsup" events "$dir/campaign.yaml" --json > "$dir/events.jsonl"
  local line
  line=$(/usr/bin/python3 - "$dir" "$width" "$spare" "$case" "$t0" "$t1" "${clean:-}" "$((s1 - s0))" $usage "$trainer" 2> "$dir/wall" <<'PY'
import glob, json, os, subprocess, sys, time
d, width, spare, case, t0, t1, clean, creations, cpu, hwm, trainer = sys.argv[1:12]
wall = float(t1) - float(t0)
s = json.load(open(d + "/status.json"))
ev = [json.loads(l) for l in open(d + "/events.jsonl") if l.strip()]
hist = s["history"]
fault = open(d + "/fault").read().split() if os.path.exists(d + "/fault") else None
victim = fault[1] if fault else None
excluded = sorted({x["node"] for x in s["exclusions"]})
healthy = [n for n in excluded if n != victim]
def first(kind, attempt):
    return next((e for e in ev if e.get("event") == kind and e.get("attempt") == attempt), None)
def slurm_start(job):
    out = subprocess.run(["scontrol", "-o", "show", "job", str(job)], capture_output=True, text=True).stdout
    f = dict(w.split("=", 1) for w in out.split() if "=" in w)
    try: return time.mktime(time.strptime(f.get("StartTime", ""), "%Y-%m-%dT%H:%M:%S"))
    except ValueError: return None
split = "-"
ended = first("attempt-ended", 1)
nxt = first("handed-over", 2) or first("submitted", 2)
if fault and ended and nxt:
    claimed = first("claimed", 2)
    start = claimed["time"] if nxt["event"] == "handed-over" and claimed else slurm_start(nxt.get("job_id"))
    parts = [ended["time"] - float(fault[0]), nxt["time"] - ended["time"], (start or nxt["time"]) - nxt["time"]]
    split = "+".join("%.1f" % max(0.0, p) for p in parts)
exact = "no result"
res = glob.glob(d + "/.mlsup/*/result.json")
if res:
    r = json.load(open(res[0]))
    want = subprocess.run(["/usr/bin/python3", trainer, "--expected-result", "--nonce", r["nonce"], "--steps",
                           str(r["steps"])], capture_output=True, text=True).stdout.strip()
    exact = "exact" if r.get("chain") == want else "WRONG"
def training_start(attempt):
    """The training's own start-up in an attempt: its first process started to its last rank's first step."""
    recs = [json.loads(l) for f in glob.glob(d + "/.mlsup/*/trainer-log.jsonl") for l in open(f) if l.strip()]
    recs = [r for r in recs if r.get("attempt") == attempt and r.get("first_step_at") and r.get("process_started_at")]
    return max(r["first_step_at"] for r in recs) - min(r["process_started_at"] for r in recs) if recs else None
restart = training_start(hist[-1]["number"] if hist else 1)
same = "yes" if hist and all(a["job_id"] == hist[0]["job_id"] for a in hist) else "no"
lost = "%.1f" % (wall - float(clean)) if clean else "-"
less_restart = "%.1f" % (wall - float(clean) - restart) if clean and restart is not None and len(hist) > 1 else "-"
probe_steps = int(creations) - len(hist)
took = "%.1f" % (float(fault[0]) - float(fault[3])) if fault and fault[2] == "freeze" else "-"
print(f"{width:>5} {spare:>6} {case:<9} {wall:6.1f} {lost:>6} {'-' if restart is None else '%.1f' % restart:>9}"
      f" {less_restart:>12} {len(hist):>8} {same:>8} {','.join(excluded) or '-':<12}"
      f" {len(healthy):>7} {probe_steps:>11} {split:<16} {took:>8} {cpu:>6} {int(hwm) / 1024:6.1f}  {exact}")
print("WALL %.1f" % wall, file=sys.stderr)
PY
)
  echo "$line"
  [ "$case" != clean ] || clean_wall=$(awk '/^WALL/ { print $2 }' "$dir/wall")
  settle "$dir"
}

printf '%5s %6s %-9s %6s %6s %9s %12s %8s %8s %-12s %7s %11s %-16s %8s %6s %6s  %s\n' width spares case wall lost \
  restart_s lost_less_rs attempts \
  same_job excluded healthy probe_steps detect+react+start freeze_s cpu_s rss_MB result
seq_no=0
for i in $(seq 1 "$repeat"); do
  for width in ${widths//,/ }; do
    for spare in ${spares//,/ }; do
      clean_wall=""
      for c in ${cases//,/ }; do run "$width" "$spare" "$c" "$clean_wall"; done
    done
  done
done
