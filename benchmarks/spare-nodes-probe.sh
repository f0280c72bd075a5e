#!/usr/bin/env bash
# What Slurm does to a running job when one of its nodes dies, and how soon a new step can start
# inside the same allocation: the measurements behind docs/spare-nodes.md.
#   benchmarks/spare-nodes-probe.sh [SCENARIO...]
# Scenarios (default: all but the two long ones, in this order):
#   crash-nokill crash-kill freeze-nokill freeze-kill     a non-batch node dies, with/without --no-kill
#   batchhost-crash batchhost-freeze                      the batch host dies (--no-kill)
#   step-wait step-scancel step-killtasks step-overlap step-scancel-overlap
#                                                         after a power loss: a new 2-node step on the
#                                                         survivor + the spare, after each way of ending
#                                                         the dead step
#   rank-order                                            which rank runs on which node of a step
#   plain-srun                                            a plain `srun` inside a --no-kill job, steered by
#                                                         the environment onto chosen nodes, in a chosen rank
#                                                         order, beside a step that holds their CPUs
#   step-scancel-long step-scancel-overlap-long           (not in the default list) the same, watched
#                                                         for 150 s / with a step 1 that lives 60 s
# Each job holds 3 nodes (2 CPUs each, all of them used by a step): the training's step runs on the
# first two (the first is the batch host), the third is the spare. Uses the cluster named by
# SLURM_CONF (a tests/cluster/cluster.sh cluster: fault.sh needs its folder), or starts (and stops)
# a private one with accounting, SlurmdTimeout=10. The default scenarios take about 8 minutes on
# 2 cores, the two long ones 5 more.
set -uo pipefail
renice -n 10 $$ >/dev/null 2>&1 || true
cd "$(dirname "$0")/.." || exit 1

own_cluster=""
if [ -z "${SLURM_CONF:-}" ]; then
  own_cluster=$(mktemp -d /tmp/spare-probe-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" --nodes 4 --slurmd-timeout 10 --accounting)"
fi
cdir=$(dirname "$SLURM_CONF")
work=$(mktemp -d /tmp/spare-probe-work.XXXXXX)
chmod 0755 "$work"
jobs_started=()
frozen=""
cleanup() {
  local j
  [ -z "$frozen" ] || tests/cluster/fault.sh --dir "$cdir" revive "$frozen" --timeout 60 >/dev/null 2>&1 || true
  for j in "${jobs_started[@]}"; do scancel "$j" 2>/dev/null || true; done
  [ -z "$own_cluster" ] || tests/cluster/cluster.sh stop --dir "$own_cluster" --clean >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

mapfile -t nodes < <(sinfo -h -N -o '%N' | sort -uV)
[ "${#nodes[@]}" -ge 4 ] || { echo "needs a cluster of 4 nodes" >&2; exit 1; }
n1=${nodes[0]} n2=${nodes[1]} n3=${nodes[2]}
sacct_ok=1
sacct -X -n -S now >/dev/null 2>&1 || sacct_ok=0

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }
fault() { tests/cluster/fault.sh --dir "$cdir" "$@" >/dev/null 2>&1; }

# The batch script: the training's step on the first two nodes in the background; while it runs,
# and after, it looks every 0.1 s for a file `go` naming the next step's nodes and srun options,
# the hand-over a spare-node restart would use; it logs every event with the time.
cat > "$work/batch.sh" <<'BATCH'
#!/bin/bash
d=$1 first=$2
log() { echo "$(date +%s.%N) $*" >> "$d/$SLURM_JOB_ID.log"; }
log "batch started on $SLURMD_NODENAME, nodes $SLURM_JOB_NODELIST"
srun -N2 -n2 -c2 -w "$first" --kill-on-bad-exit=1 sleep 600 > "$d/$SLURM_JOB_ID.step0" 2>&1 &
s0=$!
step0_done=0
while :; do
  if (( ! step0_done )) && ! kill -0 "$s0" 2>/dev/null; then
    wait "$s0"; log "step 0 ended, srun rc $?"; step0_done=1
  fi
  if [ -f "$d/$SLURM_JOB_ID.go" ]; then
    read -r nodelist lasts opts < "$d/$SLURM_JOB_ID.go"; rm -f "$d/$SLURM_JOB_ID.go"
    log "step 1 requested on $nodelist ($opts)"
    # shellcheck disable=SC2086
    srun -N2 -n2 -c2 -w "$nodelist" $opts bash -c 'echo "$(date +%s.%N) $SLURMD_NODENAME"; sleep $0' \
      "$lasts" > "$d/$SLURM_JOB_ID.step1" 2>&1
    log "step 1 ended, srun rc $?"
  fi
  sleep 0.1
done
BATCH
chmod 0755 "$work/batch.sh"

# Submits the 3-node job with extra sbatch options; prints its id once its step 0 runs on 2 nodes.
submit() {
  local j i
  j=$(sbatch --parsable -N3 --ntasks-per-node=1 -c2 --no-requeue -w "$n1,$n2,$n3" -t 10 \
        -o "$work/%j.out" "$@" "$work/batch.sh" "$work" "$n1,$n2") || return 1
  jobs_started+=("$j")
  for ((i = 0; i < 300; i++)); do
    squeue -h -s -j "$j" -o %i 2>/dev/null | grep -x "$j\.0" >/dev/null && { sleep 1; echo "$j"; return 0; }
    sleep 0.2
  done
  echo "job $j did not start its step" >&2; return 1
}

# One line of what Slurm shows of job $1 and node $2.
snapshot() {
  local rec st nl nn steps nstate
  rec=$(scontrol -o show job "$1" 2>/dev/null)
  st=$(grep -o 'JobState=[^ ]*' <<< "$rec" | cut -d= -f2)
  nl=$(grep -o ' NodeList=[^ ]*' <<< "$rec" | cut -d= -f2)
  nn=$(grep -o 'NumNodes=[^ ]*' <<< "$rec" | cut -d= -f2)
  steps=$(squeue -h -s -j "$1" -o '%i:%N' 2>/dev/null | tr '\n' ' ')
  nstate=$(sinfo -h -N -n "$2" -o '%T' 2>/dev/null | head -1)
  echo "job=$st nodes=$nl($nn) steps=[${steps% }] $2=$nstate"
}

# Prints a line each time the snapshot changes, for $3 seconds or until "$4" (a command) succeeds.
watch_job() {
  local job=$1 node=$2 limit=$3 until=${4:-false} last="" cur t0 end
  t0=$fault_at
  end=$(( $(date +%s) + limit ))
  while [ "$(date +%s)" -lt "$end" ]; do
    cur=$(snapshot "$job" "$node")
    [ "$cur" = "$last" ] || { echo "  +$(since "$t0" "$(now)")s $cur"; last=$cur; }
    eval "$until" && break
    sleep 0.5
  done
}

# The batch script's own log, times relative to the fault.
batch_log() {
  local f=$work/$1.log
  [ -f "$f" ] || return 0
  while read -r t rest; do echo "  batch +$(since "$fault_at" "$t")s: $rest"; done < "$f"
}

# What accounting and the controller say once it has settled.
final_views() {
  local j=$1
  echo "  scontrol: $(scontrol -o show job "$j" 2>/dev/null | grep -oE '(^| )(JobState|Reason|ExitCode|BatchHost|NodeList|NumNodes)=[^ ]*' | sed 's/^ //' | tr '\n' ' ')"
  [ "$sacct_ok" = 1 ] && sacct -j "$j" -n -P -o JobID,State,ExitCode,NodeList 2>/dev/null | sed 's/^/  sacct: /'
  grep -E "JobId=$j( |\$)|StepId=$j\.|not responding, setting DOWN" "$cdir/log/slurmctld.log" 2>/dev/null |
    awk -v t="$(date -d "@${fault_at%.*}" +%Y-%m-%dT%H:%M:%S)" 'substr($1, 2, 19) >= t' |
    grep -vE 'REQUEST_KILL_JOB|_slurm_rpc_submit' | head -8 | sed 's/^/  ctld: /'
  sed 's/^/  step0 srun: /' "$work/$j.step0" 2>/dev/null | tail -4
  sed 's/^/  step1 srun: /' "$work/$j.step1" 2>/dev/null | tail -6
}

# Brings node $1 back and waits until all nodes are idle again.
restore() {
  local i
  if [ -n "$1" ]; then fault revive "$1" --timeout 60 || echo "  (revive of $1 failed)"; fi
  frozen=""
  for ((i = 0; i < 120; i++)); do
    [ "$(sinfo -h -N -o '%T' | sort -u)" = idle ] && return 0
    # A node thawed with a step it could not kill while frozen may come back drained: say so, resume it.
    if [ -n "$1" ] && sinfo -h -N -n "$1" -o '%T' | grep drain >/dev/null; then
      echo "  ($1 came back drained: $(sinfo -h -N -n "$1" -o '%E' | head -1); resumed)"
      scontrol update NodeName="$1" State=RESUME
    fi
    sleep 0.5
  done
  echo "  (nodes not all idle after 60 s: $(sinfo -h -N -o '%N=%T' | tr '\n' ' '))"
}

# A node of a running job dies: $1 crash|freeze, $2 the node, the rest sbatch options.
node_dies() {
  local how=$1 node=$2 j
  shift 2
  j=$(submit "$@") || return 1
  echo "job $j (${*:-no --no-kill}) on $n1,$n2,$n3; step 0 on $n1,$n2; $how $node"
  fault_at=$(now)
  [ "$how" = freeze ] && frozen=$node
  fault "$how" "$node"
  echo "  fault in place after $(since "$fault_at" "$(now)")s"
  watch_job "$j" "$node" 40
  batch_log "$j"
  final_views "$j"
  scancel "$j" 2>/dev/null
  restore "$node"
}

# After a power loss of $n2 in a --no-kill job: $1 how the dead step is ended (wait|scancel|
# killtasks), $2 extra srun options of the new step on the survivor and the spare, $3 how long the
# new step's tasks live (0: the watch ends with the step, else it lasts $4 seconds whatever happens).
new_step() {
  local how=$1 opts=${2:-} lasts=${3:-0} limit=${4:-60} j p until
  j=$(submit --no-kill) || return 1
  echo "job $j --no-kill; step 0 on $n1,$n2; freeze $n2, then end step 0 by: $how; step 1 on $n1,$n3 ${opts:-(no extra srun option)}"
  fault_at=$(now)
  frozen=$n2
  fault freeze "$n2"
  case $how in
    wait) ;;
    scancel) scancel "$j.0" ;;
    killtasks)  # SIGKILL of step 0's tasks on the survivor, as a watcher on the node or the rank itself would
      for p in $(pgrep -x sleep); do
        tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -x "SLURM_JOB_ID=$j" >/dev/null &&
          tr '\0' '\n' < "/proc/$p/environ" | grep -x "SLURMD_NODENAME=$n1" >/dev/null && kill -KILL "$p"
      done ;;
  esac
  echo "$n1,$n3 $lasts $opts" > "$work/$j.go.tmp" && mv "$work/$j.go.tmp" "$work/$j.go"
  echo "  fault and '$how' done after $(since "$fault_at" "$(now)")s; hand-over written"
  until="grep -q 'step 1 ended' '$work/$j.log' 2>/dev/null"
  [ "$lasts" = 0 ] || until=false
  watch_job "$j" "$n2" "$limit" "$until"
  batch_log "$j"
  while read -r t who; do echo "  step 1 task ran on $who at +$(since "$fault_at" "$t")s"; done \
    < <(grep -E '^[0-9]+\.[0-9]+ ' "$work/$j.step1" 2>/dev/null)
  final_views "$j"
  scancel "$j" 2>/dev/null
  # When slurmctld released step 0's resources: at the node's DOWN, or only with the job's cancel.
  local cancelled_at
  cancelled_at=$(since "$fault_at" "$(now)")
  sleep 2
  grep -E "REQUEST_KILL_JOB JobId=$j |JobId=$j StepId=0 ending" "$cdir/log/slurmctld.log" 2>/dev/null |
    sed "s/^/  job cancelled at +${cancelled_at}s; ctld: /"
  restore "$n2"
}

# Which rank lands on which node: srun -w in either order, and a hostfile with arbitrary distribution.
rank_order() {
  local w
  # shellcheck disable=SC2016  # expanded by the task's shell
  for w in "$n3,$n1" "$n1,$n3"; do
    echo "srun -N2 -w $w:"
    srun -N2 -n2 -w "$w" bash -c 'echo "  rank $SLURM_PROCID on $SLURMD_NODENAME, SLURM_STEP_NODELIST=$SLURM_STEP_NODELIST"' | sort
  done
  printf '%s\n' "$n3" "$n1" > "$work/hosts"
  echo "SLURM_HOSTFILE=($n3 $n1) srun -n2 --distribution=arbitrary:"
  # shellcheck disable=SC2016  # expanded by the task's shell
  SLURM_HOSTFILE=$work/hosts srun -n2 --distribution=arbitrary bash -c 'echo "  rank $SLURM_PROCID on $SLURMD_NODENAME"' | sort
}

# A plain `srun` (no node or task options, as the shipped templates start the training), two tasks
# per node, inside a --no-kill job of 3 nodes while step 0 holds n1 and n2: the environment alone
# (SLURM_HOSTFILE, SLURM_DISTRIBUTION=arbitrary, SLURM_OVERLAP, the node and task counts and node
# list) puts ranks 0-1 on n3 and 2-3 on n1, at once.
plain_srun() {
  cat > "$work/plain.sh" <<'SH'
#!/bin/bash
nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
srun -N2 -n4 -w "${nodes[0]},${nodes[1]}" sleep 20 &
sleep 2
printf '%s\n' "${nodes[2]}" "${nodes[2]}" "${nodes[0]}" "${nodes[0]}" > "$WORK/hosts2"
t0=$(date +%s.%N)
# shellcheck disable=SC2016  # expanded by the task's shell
SLURM_HOSTFILE=$WORK/hosts2 SLURM_DISTRIBUTION=arbitrary SLURM_OVERLAP=1 SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2 \
  SLURM_NTASKS=4 SLURM_NPROCS=4 SLURM_TASKS_PER_NODE="2(x2)" SLURM_JOB_NODELIST="${nodes[2]},${nodes[0]}" \
  SLURM_NODELIST="${nodes[2]},${nodes[0]}" \
  srun bash -c 'echo "  rank $SLURM_PROCID (local $SLURM_LOCALID) on $SLURMD_NODENAME, SLURM_NTASKS=$SLURM_NTASKS"' | sort
echo "  srun rc ${PIPESTATUS[0]}, $(python3 -c "import time,sys; print(round(time.time()-float(sys.argv[1]),1))" "$t0") s after it was started; steps then:"
squeue -s -j "$SLURM_JOB_ID" -h -o '    %i %N'
kill %1 2>/dev/null; wait
SH
  echo "plain srun, hostfile ($n3 $n3 $n1 $n1), while step 0 holds $n1,$n2:"
  WORK=$work sbatch --wait --export=ALL -N3 -w "$n1,$n2,$n3" --ntasks-per-node=2 -c1 --no-kill --no-requeue \
    -o "$work/plain.out" "$work/plain.sh" >/dev/null
  grep -v -e '^srun: ' -e '^slurmstepd' "$work/plain.out"
}

run_one() {
  echo "== $1"
  case $1 in
    crash-nokill) node_dies crash "$n2" --no-kill ;;
    crash-kill) node_dies crash "$n2" ;;
    freeze-nokill) node_dies freeze "$n2" --no-kill ;;
    freeze-kill) node_dies freeze "$n2" ;;
    batchhost-crash) node_dies crash "$n1" --no-kill ;;
    batchhost-freeze) node_dies freeze "$n1" --no-kill ;;
    step-wait) new_step wait ;;
    step-scancel) new_step scancel ;;
    step-killtasks) new_step killtasks ;;
    step-overlap) new_step wait --overlap ;;
    step-scancel-overlap) new_step scancel --overlap ;;
    rank-order) rank_order ;;
    plain-srun) plain_srun ;;
    step-scancel-long) new_step scancel "" 0 150 ;;
    step-scancel-overlap-long) new_step scancel --overlap 60 75 ;;
    *) echo "unknown scenario $1" >&2; return 2 ;;
  esac
}

[ $# -gt 0 ] || set -- crash-nokill crash-kill freeze-nokill freeze-kill batchhost-crash \
  batchhost-freeze step-wait step-scancel step-killtasks step-overlap step-scancel-overlap rank-order plain-srun
echo "cluster $SLURM_CONF: $(scontrol show config | grep -E '^(SLURM_VERSION|SlurmdTimeout|KillWait|MessageTimeout) ' | awk '{printf "%s=%s ", $1, $3}')"
echo "nodes ${nodes[*]}; sacct $([ "$sacct_ok" = 1 ] && echo available || echo 'not available (no accounting)')"
for s in "$@"; do run_one "$s"; done
