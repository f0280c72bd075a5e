#!/usr/bin/env bash
# Chaos: one campaign on the live cluster while its training is crashed, hung and its node taken
# down at random, its supervisor is SIGKILLed at random moments and restarted, and cron ticks race
# it. Then it checks what mlsup promises:
#   - never two live jobs of the campaign at once (slurmctld sampled every 0.2 s);
#   - no lost ending: every job of the campaign Slurm showed is an attempt in its journal, and
#     every attempt but the last has ended;
#   - the result is exactly an uninterrupted run's (the trainer's chain for its nonce and steps);
#   - the journal opens cleanly (`mlsup status --json` reports no problem), and the run ends in 0.
# On a cluster with accounting (slurmdbd), accounting is asked as well, once the run is over: every
# job whose comment carries the campaign's tag (sacct), with its submit and end times: never two of
# them live at once, every one of them a job mlsup's journal knows (none submitted behind its back
# or twice), and every job the journal knows is in accounting. mlsup's view is read through
# `mlsup status --json` and `mlsup events --json`.
# With --ctld-restarts N, slurmctld is also stopped and started again N times at random moments (its
# state and the jobs survive); with --fault-every 0 no fault is injected, so any attempt that did not
# complete is a false failure, and the summary counts them.
#   benchmarks/chaos.sh [--kills 100] [--steps 6000] [--fault-every 20] [--ctld-restarts 0]
#                       [--restart-every 20] [--limit 7200] [--seed N] [--accounting]
# Uses the cluster named by SLURM_CONF (restarts need one that tests/cluster/cluster.sh started), or
# starts (and stops) a private one, with accounting when --accounting is given; --accounting with
# SLURM_CONF insists that cluster has accounting. Prints one summary line and exits 0 when every
# check holds, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
kills=100 steps=6000 fault_every=20 ctld_restarts=0 restart_every=20 limit=7200 seed=$$ accounting=""
while [ $# -gt 0 ]; do
  case $1 in
    --kills) kills=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --fault-every) fault_every=$2; shift 2 ;;
    --ctld-restarts) ctld_restarts=$2; shift 2 ;;
    --restart-every) restart_every=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --accounting) accounting=--accounting; shift ;;
    *) echo "usage: $0 [--kills N] [--steps N] [--fault-every S] [--ctld-restarts N] [--restart-every S] [--limit S] [--seed N] [--accounting]" >&2
       exit 2 ;;
  esac
done
RANDOM=$seed
mlsup=$(realpath "${MLSUP:-build/mlsup}")
[ -x "$mlsup" ] || ./scripts/build.sh >/dev/null
trainer=$PWD/examples/trainer/train.py

own_cluster=""
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/mlsup-chaos-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4 --slurmd-timeout 10 $accounting)"
fi
has_accounting() {  # awk reads to the end: grep -q would leave scontrol to SIGPIPE, which pipefail counts
  [ "$(scontrol show config 2>/dev/null | awk '$1 == "AccountingStorageType" { print $3 }')" = accounting_storage/slurmdbd ]
}
if [ -n "$accounting" ] && ! has_accounting; then
  echo "chaos: --accounting, but the cluster of $SLURM_CONF has no accounting (slurmdbd)" >&2
  exit 2
fi
started=$(date +%s)
cluster_dir=$(dirname "$SLURM_CONF")
if [ "$ctld_restarts" -gt 0 ] && ! tests/cluster/cluster.sh status --dir "$cluster_dir" >/dev/null 2>&1; then
  echo "chaos: --ctld-restarts needs a cluster started by tests/cluster/cluster.sh ($cluster_dir is not one)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/mlsup-chaos.XXXXXX)
name="chaos-$$-$RANDOM"
nonce=$(printf '%08x' "$seed")
conf=$work/campaign.yaml
state=$work/.mlsup/$name
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  pkill -9 -f "$conf" 2>/dev/null
  for j in $(squeue -h -o '%i %k' 2>/dev/null | awk -v t="mlsup:$name:" 'index($2, t) == 1 { print $1 }'); do scancel "$j"; done
  for n in $(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 ~ /down|drain/ { print $1 }'); do
    scontrol update nodename="$n" state=resume 2>/dev/null
  done
  [ -n "$own_cluster" ] && tests/cluster/cluster.sh stop --dir "$own_cluster" >/dev/null 2>&1
}
trap cleanup EXIT

cat > "$conf" <<YAML
name: $name
template: $PWD/templates/srun.sbatch.tmpl
vars:
  script: $trainer
  script_args: --steps $steps --step-seconds 0.05 --ckpt-every 25 --nonce $nonce
slurm:
  nodes: 1
  ntasks_per_node: 1
  time: "01:00:00"
  signal_lead: 60s
checkpoint:
  layout: glob
  complete_marker: COMPLETE
  keep: 3
heartbeat:
  startup_timeout: 2m
  steady_timeout: 8s
policy:
  budgets: {failed: unlimited, hang: unlimited, node_fail: unlimited, boot_fail: unlimited}
  crash_loop_restarts: 1000
  backoff_initial: 1s
  backoff_max: 2s
  exclusion_ttl: 20s
poll_interval: 500ms
YAML

live_jobs() { squeue -h -o '%i %T %k' 2>/dev/null | awk -v t="mlsup:$name:" 'index($3, t) == 1'; }
finished() { [ -f "$work/done" ]; }

# The monitor: every job of the campaign Slurm shows, and the most live at once.
( while ! finished; do
    live_jobs | tee -a "$work/seen" | awk '$2 ~ /^(PENDING|RUNNING|CONFIGURING|SUSPENDED)$/' | wc -l >> "$work/live_counts"
    sleep 0.2
  done ) &
pids+=($!)

# Cron ticks racing the supervisor.
( while ! finished; do
    "$mlsup" tick "$conf" >> "$work/ticks.out" 2>&1
    sleep "0.$(( RANDOM % 10 ))$(( RANDOM % 10 ))"; sleep $(( RANDOM % 3 ))
  done ) &
pids+=($!)

# slurmctld stopped and started again at random moments (its state and the jobs survive).
( n=0
  while ! finished && [ "$n" -lt "$ctld_restarts" ]; do
    sleep $(( restart_every / 2 + RANDOM % (restart_every + 1) ))
    finished && break
    tests/cluster/cluster.sh restart-ctld --dir "$cluster_dir" >/dev/null 2>&1 && echo "ctld-restart $(date +%s)"
    n=$((n + 1))
  done > "$work/restarts" ) &
pids+=($!)

# Faults in the training: a crash, a hang, or its node taken down for a while.
( n=0
  while [ "$fault_every" -gt 0 ] && ! finished; do
    sleep $(( fault_every / 2 + RANDOM % (fault_every + 1) ))
    finished && break
    job=$(live_jobs | awk '$2 == "RUNNING" { print $1; exit }')
    [ -n "$job" ] || continue
    case $(( RANDOM % 3 )) in
      0) pkill -9 -f "train.py.*--nonce $nonce" && echo "crash $job" ;;
      1) pkill -STOP -f "train.py.*--nonce $nonce" && echo "hang $job" ;;
      2) node=$(squeue -h -j "$job" -o '%N'); [ -n "$node" ] || continue
         scontrol update nodename="$node" state=down reason=chaos && echo "node-down $job $node"
         ( sleep 15; scontrol update nodename="$node" state=resume 2>/dev/null ) & ;;
    esac
    n=$((n + 1))
  done > "$work/faults" ) &
pids+=($!)

# The supervisor, SIGKILLed at random moments and restarted at once.
t0=$(date +%s)
done_kills=0 rc=""
while [ $(( $(date +%s) - t0 )) -lt "$limit" ]; do
  "$mlsup" run "$conf" >> "$work/run.out" 2>&1 &
  runner=$!
  if [ "$done_kills" -lt "$kills" ]; then
    sleep "$(( RANDOM % 6 )).$(( RANDOM % 10 ))"
    if kill -0 "$runner" 2>/dev/null; then
      kill -9 "$runner"; wait "$runner" 2>/dev/null
      done_kills=$((done_kills + 1))
      continue
    fi
  fi
  wait "$runner"; rc=$?
  [ "$rc" -eq 5 ] && { sleep 1; continue; }  # a tick held the lease at that moment
  break
done
touch "$work/done"
sleep 1
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done

status=$("$mlsup" status "$conf" --json)
py() { /usr/bin/python3 -c "$1" "$work" "$status" "${@:2}"; }
max_live=$(sort -n "$work/live_counts" | tail -1)
jobs_seen=$(awk '{ print $1 }' "$work/seen" | sort -u | wc -l)
lost=$(py '
import json, sys
work, s = sys.argv[1], json.loads(sys.argv[2])
ids = {a["job_id"] for a in s["history"] if a["job_id"]}
seen = {int(l.split()[0]) for l in open(work + "/seen") if l.strip()}
unended = [a["number"] for a in s["history"][:-1] if not a["ended"]]
print(len(seen - ids) + len(unended))')
problems=$(py 'import json, sys; print(len(json.loads(sys.argv[2]).get("problems", [])))')
attempts=$(py 'import json, sys; print(len(json.loads(sys.argv[2])["history"]))')
exact=no
if [ -f "$state/result.json" ]; then
  expected=$(/usr/bin/python3 "$trainer" --expected-result --nonce "$nonce" --steps "$steps")
  chain=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain"])' "$state/result.json")
  [ "$chain" = "$expected" ] && exact=yes
fi
faults=$(wc -l < "$work/faults")
restarts=$(wc -l < "$work/restarts")
# Without injected faults, every attempt that ended other than completed is a false failure.
false_failures=0
if [ "$faults" -eq 0 ]; then
  false_failures=$(py 'import json, sys
print(sum(1 for a in json.loads(sys.argv[2])["history"] if a["ended"] and a["class"] != "completed"))')
fi
# Accounting's view, on a cluster that has it: the campaign's jobs (their comment carries its tag)
# with submit, start and end times in unix seconds, asked once slurmdbd has every job the journal
# knows as ended (slurmctld tells it asynchronously; slurmdbd stores a job's comment when it ends, and
# a job still live then is in slurmctld's samples). A job is live from its submission to its end.
acct_summary="accounting: none" acct_ok=yes
if has_accounting; then
  "$mlsup" events "$conf" --json > "$work/events.jsonl"
  since=$(date -d "@$(( started - 60 ))" +%Y-%m-%dT%H:%M:%S)
  # Every state named: without a state list sacct leaves out a job that was never eligible (held).
  acct_rows() {
    SLURM_TIME_FORMAT=%s sacct -X -n -P -a -S "$since" -E now -s BF,CA,CD,DL,F,NF,OOM,PD,PR,R,RQ,RS,RV,S,TO \
      -o JobIDRaw,Submit,Start,End,State,Comment 2>/dev/null |
      awk -F'|' -v t="mlsup:$name:" 'index($6, t) == 1' > "$work/accounting"
  }
  acct_check() { py '
import json, sys
work, s = sys.argv[1], json.loads(sys.argv[2])
def number(t):
    return int(t) if t.isdigit() else None
rows = [l.rstrip("\n").split("|", 5) for l in open(work + "/accounting") if l.strip()]
acct = {int(r[0]): (number(r[1]), number(r[3]), r[4]) for r in rows}
journal = {a["job_id"] for a in s["history"] if a["job_id"]}
for l in open(work + "/events.jsonl"):
    e = json.loads(l) if l.strip() else {}
    if isinstance(e.get("job_id"), int): journal.add(e["job_id"])
if sys.argv[3] == "ready":  # every journaled job in accounting, ended
    print("yes" if all(j in acct and acct[j][1] is not None for j in journal) else "no"); sys.exit()
marks = sorted([(sub, 1) for sub, end, _ in acct.values()] +
               [(end if end is not None else float("inf"), -1) for sub, end, _ in acct.values()])
live = most = 0
for _, d in marks:  # an end sorts before a submission of the same second: [submit, end) intervals
    live += d; most = max(most, live)
print(len(acct), most, len(set(acct) - journal), len(journal - set(acct)))' "$1"; }
  for _ in $(seq 60); do
    acct_rows
    [ "$(acct_check ready)" = yes ] && break
    sleep 1
  done
  read -r acct_jobs acct_most acct_unknown acct_missing <<< "$(acct_check figures)"
  acct_summary="accounting: $acct_jobs jobs, most live at once: $acct_most, unknown to the journal: $acct_unknown, journaled but not in accounting: $acct_missing"
  [ "$acct_most" -le 1 ] && [ "$acct_unknown" -eq 0 ] && [ "$acct_missing" -eq 0 ] || acct_ok=no
fi
echo "chaos: $done_kills supervisor kills, $faults faults ($(cut -d' ' -f1 "$work/faults" | sort | uniq -c | awk '{ printf "%s %s ", $1, $2 }')), $restarts slurmctld restarts, $attempts attempts, $jobs_seen jobs; most live at once: $max_live; lost endings: $lost; false failures: $false_failures; result exact: $exact; journal problems: $problems; last run exit ${rc:-none}; $acct_summary; $(( $(date +%s) - t0 ))s (folder $work)"
[ "$max_live" -le 1 ] && [ "$lost" -eq 0 ] && [ "$false_failures" -eq 0 ] && [ "$exact" = yes ] && [ "$problems" -eq 0 ] &&
  [ "${rc:-1}" -eq 0 ] && [ "$acct_ok" = yes ]
