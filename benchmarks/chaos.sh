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
# The controller's faults, at random moments spaced by about --restart-every seconds: --ctld-restarts N
# stops and starts slurmctld (its state and the jobs survive), --ctld-freezes N stops it (SIGSTOP) for
# --freeze-seconds, --ctld-crashes N kills it (SIGKILL) and starts it from a copy of its state taken
# 1-4 s earlier (a crash that loses what came after: a submission, an ending). --slow-sbatch S puts an
# sbatch first on PATH that waits 0-S s before the real one (a slow controller), so that supervisor
# kills land during sbatch too (the summary counts those); --kill-in-sbatch P makes P percent of the
# kills wait (up to 20 s) for an sbatch in flight. --fault-kinds LIST (crash,hang,node-down: the
# default) chooses the training's faults. --nodes N gives the training N nodes.
# With --fault-every 0 no fault is injected in the training, so any attempt that did not complete is
# a false failure and any node excluded a false exclusion, and the summary counts them; with hangs as
# the only faults (all ranks stopped, every node still answering) any exclusion is a false one too.
# Besides the checks above: never two running jobs of the campaign at once, and no job the journal
# does not name ever started (a duplicate, held as mlsup submits, is cancelled before it can).
#   benchmarks/chaos.sh [--kills 100] [--steps 6000] [--fault-every 20] [--ctld-restarts 0]
#                       [--ctld-freezes 0] [--freeze-seconds 20] [--ctld-crashes 0] [--slow-sbatch 0]
#                       [--kill-in-sbatch 0] [--fault-kinds crash,hang,node-down] [--nodes 1]
#                       [--restart-every 20] [--limit 7200] [--seed N] [--accounting]
# Uses the cluster named by SLURM_CONF (restarts need one that tests/cluster/cluster.sh started), or
# starts (and stops) a private one, with accounting when --accounting is given; --accounting with
# SLURM_CONF insists that cluster has accounting. Prints one summary line and exits 0 when every
# check holds, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
kills=100 steps=6000 fault_every=20 ctld_restarts=0 restart_every=20 limit=7200 seed=$$ accounting=""
ctld_freezes=0 freeze_seconds=20 ctld_crashes=0 slow_sbatch=0 nodes=1 kill_in_sbatch=0 fault_kinds=crash,hang,node-down
while [ $# -gt 0 ]; do
  case $1 in
    --kills) kills=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --fault-every) fault_every=$2; shift 2 ;;
    --ctld-restarts) ctld_restarts=$2; shift 2 ;;
    --ctld-freezes) ctld_freezes=$2; shift 2 ;;
    --freeze-seconds) freeze_seconds=$2; shift 2 ;;
    --ctld-crashes) ctld_crashes=$2; shift 2 ;;
    --slow-sbatch) slow_sbatch=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --kill-in-sbatch) kill_in_sbatch=$2; shift 2 ;;
    --fault-kinds) fault_kinds=$2; shift 2 ;;
    --restart-every) restart_every=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --accounting) accounting=--accounting; shift ;;
    *) echo "usage: $0 [--kills N] [--steps N] [--fault-every S] [--ctld-restarts N] [--ctld-freezes N] [--freeze-seconds S]" \
            "[--ctld-crashes N] [--slow-sbatch S] [--kill-in-sbatch P] [--fault-kinds LIST] [--nodes N] [--restart-every S]" \
            "[--limit S] [--seed N] [--accounting]" >&2
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
ctld_faults=$((ctld_restarts + ctld_freezes + ctld_crashes))
if [ "$ctld_faults" -gt 0 ] && ! tests/cluster/cluster.sh status --dir "$cluster_dir" >/dev/null 2>&1; then
  echo "chaos: the controller's faults need a cluster started by tests/cluster/cluster.sh ($cluster_dir is not one)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/mlsup-chaos.XXXXXX)
name="chaos-$$-$RANDOM"
nonce=$(printf '%08x' "$seed")
conf=$work/campaign.yaml
state=$work/.mlsup/$name
pids=()
# The slow controller: an sbatch that waits before the real one, first on PATH for run and ticks.
mkdir -p "$work/bin"
real_sbatch=$(command -v sbatch)
printf '#!/bin/bash\nsleep "$(( RANDOM %% (%d + 1) )).$(( RANDOM %% 10 ))"\nexec %s "$@"\n' "$slow_sbatch" "$real_sbatch" > "$work/bin/sbatch"
chmod +x "$work/bin/sbatch"
[ "$slow_sbatch" -eq 0 ] || export PATH="$work/bin:$PATH"
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
  nodes: $nodes
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
  save_timeout: 20s
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

# The monitor: every job of the campaign Slurm shows, the most running at once, and (once a second)
# the nodes Slurm itself marks not responding or down.
( i=0
  while ! finished; do
    live_jobs | tee -a "$work/seen" | awk '$2 ~ /^(RUNNING|CONFIGURING|SUSPENDED)$/' | wc -l >> "$work/live_counts"
    [ $((i % 5)) -ne 0 ] || sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 ~ /\*|down|fail/ { print $1 }' >> "$work/slurm_down"
    i=$((i + 1))
    sleep 0.2
  done ) &
pids+=($!)

# Cron ticks racing the supervisor.
( while ! finished; do
    "$mlsup" tick "$conf" >> "$work/ticks.out" 2>&1
    sleep "0.$(( RANDOM % 10 ))$(( RANDOM % 10 ))"; sleep $(( RANDOM % 3 ))
  done ) &
pids+=($!)

# The controller's faults in a random order, at random moments: restarts (state and jobs survive),
# freezes, and crashes that lose the last seconds of its state.
( plan=()
  for ((i = 0; i < ctld_restarts; i++)); do plan+=(restart); done
  for ((i = 0; i < ctld_freezes; i++)); do plan+=(freeze); done
  for ((i = 0; i < ctld_crashes; i++)); do plan+=(crash); done
  for ((i = ${#plan[@]} - 1; i > 0; i--)); do j=$(( RANDOM % (i + 1) )); t=${plan[i]}; plan[i]=${plan[j]}; plan[j]=$t; done
  for fault in "${plan[@]}"; do
    sleep $(( restart_every / 2 + RANDOM % (restart_every + 1) ))
    finished && break
    case $fault in
      restart) tests/cluster/cluster.sh restart-ctld --dir "$cluster_dir" >/dev/null 2>&1 ;;
      freeze) tests/cluster/fault.sh --dir "$cluster_dir" freeze-ctld >/dev/null 2>&1
              sleep "$freeze_seconds"
              tests/cluster/fault.sh --dir "$cluster_dir" thaw-ctld >/dev/null 2>&1 ;;
      crash) tests/cluster/fault.sh --dir "$cluster_dir" snapshot-ctld "$work/ctld-state" >/dev/null 2>&1
             sleep "$(( 1 + RANDOM % 4 ))"
             tests/cluster/fault.sh --dir "$cluster_dir" crash-ctld --restore "$work/ctld-state" >/dev/null 2>&1 ;;
    esac && echo "ctld-$fault $(date +%s)"
  done > "$work/restarts" ) &
pids+=($!)

# Faults in the training: a crash, a hang, or its node taken down for a while.
( n=0
  while [ "$fault_every" -gt 0 ] && ! finished; do
    sleep $(( fault_every / 2 + RANDOM % (fault_every + 1) ))
    finished && break
    job=$(live_jobs | awk '$2 == "RUNNING" { print $1; exit }')
    [ -n "$job" ] || continue
    IFS=, read -ra kinds <<< "$fault_kinds"
    case ${kinds[$(( RANDOM % ${#kinds[@]} ))]} in
      crash) pkill -9 -f "train.py.*--nonce $nonce" && echo "crash $job" ;;
      hang) pkill -STOP -f "train.py.*--nonce $nonce" && echo "hang $job" ;;
      node-down) node=$(squeue -h -j "$job" -o '%N' | cut -d, -f1); [ -n "$node" ] || continue
         scontrol update nodename="$node" state=down reason=chaos && echo "node-down $job $node"
         ( sleep 15; scontrol update nodename="$node" state=resume 2>/dev/null ) & ;;
    esac
    n=$((n + 1))
  done > "$work/faults" ) &
pids+=($!)

# The supervisor, SIGKILLed at random moments and restarted at once.
t0=$(date +%s)
done_kills=0 kills_in_sbatch=0 rc=""
while [ $(( $(date +%s) - t0 )) -lt "$limit" ]; do
  "$mlsup" run "$conf" >> "$work/run.out" 2>&1 &
  runner=$!
  if [ "$done_kills" -lt "$kills" ]; then
    if [ $(( RANDOM % 100 )) -lt "$kill_in_sbatch" ]; then  # wait for an sbatch in flight (a resubmission)
      for _ in $(seq 200); do pgrep -P "$runner" -f sbatch >/dev/null && break; kill -0 "$runner" 2>/dev/null || break; sleep 0.1; done
      sleep "0.$(( RANDOM % 10 ))"
    else
      sleep "$(( RANDOM % 6 )).$(( RANDOM % 10 ))"
    fi
    if kill -0 "$runner" 2>/dev/null; then
      pgrep -P "$runner" -f sbatch >/dev/null && kills_in_sbatch=$((kills_in_sbatch + 1))
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

status=$("$mlsup" status "$conf" --json --history all)
"$mlsup" events "$conf" --json > "$work/events.jsonl"
py() { /usr/bin/python3 -c "$1" "$work" "$status" "${@:2}"; }
max_live=$(sort -n "$work/live_counts" | tail -1)
jobs_seen=$(awk '{ print $1 }' "$work/seen" | sort -u | wc -l)
lost=$(py '
import json, sys
work, s = sys.argv[1], json.loads(sys.argv[2])
ids = {a["job_id"] for a in s["history"] if a["job_id"]}
ids |= {e["job_id"] for e in map(json.loads, filter(str.strip, open(work + "/events.jsonl"))) if e.get("event") == "duplicate-cancelled"}
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
restarts=$(grep -c '^ctld-restart' "$work/restarts")
freezes=$(grep -c '^ctld-freeze' "$work/restarts")
crashes=$(grep -c '^ctld-crash' "$work/restarts")
# Jobs of the campaign that ran (Slurm showed them running) though the journal names them for no
# attempt, and the duplicates mlsup cancelled.
read -r dup_started dup_cancelled <<< "$(py '
import json, sys
work, s = sys.argv[1], json.loads(sys.argv[2])
ids = {a["job_id"] for a in s["history"] if a["job_id"]}
ran = {int(l.split()[0]) for l in open(work + "/seen") if l.split()[1:2] in (["RUNNING"], ["CONFIGURING"])}
events = [json.loads(l) for l in open(work + "/events.jsonl") if l.strip()]
print(len(ran - ids), sum(1 for e in events if e.get("event") == "duplicate-cancelled"))')"
# Nodes excluded, and of them those Slurm itself marked not responding or down meanwhile (its verdicts).
touch "$work/slurm_down"
read -r excluded by_slurm <<< "$(py '
import json, sys
work, s = sys.argv[1], json.loads(sys.argv[2])
down = {l.strip() for l in open(work + "/slurm_down") if l.strip()}
nodes = [x["node"] for x in s["exclusions"]]
print(len(nodes), sum(1 for n in nodes if n in down))')"
# Without injected faults, every attempt that ended other than completed is a false failure, and every
# exclusion mlsup made (not on a node Slurm itself marked) a false one. An attempt forgotten by a
# controller that lost its state is no failure: it is the controller's fault, told and resubmitted.
false_failures=0 false_exclusions=0
if [ "$faults" -eq 0 ]; then
  false_failures=$(py 'import json, sys
print(sum(1 for a in json.loads(sys.argv[2])["history"] if a["ended"] and a["class"] not in ("completed", "forgotten")))')
fi
if ! grep -qE '^(crash|node-down) ' "$work/faults"; then  # hangs on live nodes, or nothing: no node to blame
  false_exclusions=$((excluded - by_slurm))
fi
# Accounting's view, on a cluster that has it: the campaign's jobs (their comment carries its tag)
# with submit, start and end times in unix seconds, asked once slurmdbd has every job the journal
# knows as ended (slurmctld tells it asynchronously; slurmdbd stores a job's comment when it ends, and
# a job still live then is in slurmctld's samples). A job is live from its submission to its end.
acct_summary="accounting: none" acct_ok=yes
if has_accounting; then
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
acct = {int(r[0]): (number(r[2]), number(r[3]), r[4]) for r in rows}
journal = {a["job_id"] for a in s["history"] if a["job_id"]}
for l in open(work + "/events.jsonl"):
    e = json.loads(l) if l.strip() else {}
    if isinstance(e.get("job_id"), int): journal.add(e["job_id"])
if sys.argv[3] == "ready":  # every journaled job in accounting, ended
    print("yes" if all(j in acct and acct[j][1] is not None for j in journal) else "no"); sys.exit()
ran = [(start, end) for start, end, _ in acct.values() if start is not None]  # a job cancelled held never started
marks = sorted([(start, 1) for start, end in ran] + [(end if end is not None else float("inf"), -1) for start, end in ran])
live = most = 0
for _, d in marks:  # an end sorts before a start of the same second: [start, end) intervals
    live += d; most = max(most, live)
print(len(acct), most, len(set(acct) - journal), len(journal - set(acct)))' "$1"; }
  for _ in $(seq 60); do
    acct_rows
    [ "$(acct_check ready)" = yes ] && break
    sleep 1
  done
  read -r acct_jobs acct_most acct_unknown acct_missing <<< "$(acct_check figures)"
  acct_summary="accounting: $acct_jobs jobs, most running at once: $acct_most, unknown to the journal: $acct_unknown, journaled but not in accounting: $acct_missing"
  [ "$acct_most" -le 1 ] && [ "$acct_unknown" -eq 0 ] && [ "$acct_missing" -eq 0 ] || acct_ok=no
fi
echo "chaos: $done_kills supervisor kills ($kills_in_sbatch during an sbatch), $faults faults ($(cut -d' ' -f1 "$work/faults" | sort | uniq -c | awk '{ printf "%s %s ", $1, $2 }')), $restarts slurmctld restarts, $freezes freezes, $crashes crashes, $attempts attempts, $jobs_seen jobs; most running at once: $max_live; duplicates started: $dup_started, cancelled: $dup_cancelled; lost endings: $lost; false failures: $false_failures; exclusions: $excluded (on nodes Slurm marked: $by_slurm), false: $false_exclusions; result exact: $exact; journal problems: $problems; last run exit ${rc:-none}; $acct_summary; $(( $(date +%s) - t0 ))s (folder $work)"
[ "$max_live" -le 1 ] && [ "$dup_started" -eq 0 ] && [ "$lost" -eq 0 ] && [ "$false_failures" -eq 0 ] &&
  [ "$false_exclusions" -eq 0 ] && [ "$exact" = yes ] && [ "$problems" -eq 0 ] && [ "${rc:-1}" -eq 0 ] && [ "$acct_ok" = yes ]
