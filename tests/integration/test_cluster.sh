#!/usr/bin/env bash
# Integration test of tests/cluster/cluster.sh and fault.sh against a real local Slurm cluster.
# Uses the cluster named by $SLURM_CONF (started with cluster.sh, 4 nodes), or starts its own in a
# temporary directory and stops it on exit. Each step is one check, made in a child process under a
# hard limit (lib.sh's check_within), which prints its wall time; the suite ends with "N passed, M failed".
set -uo pipefail
source "$(dirname "$0")/lib.sh"

CLUSTER_SH="$REPO/tests/cluster/cluster.sh"
FAULT_SH="$REPO/tests/cluster/fault.sh"
JOB_PREFIX=mlsup-tc-

# Runs a Slurm client command against the cluster under test, bounded in time.
sl() { timeout 20 "$@"; }

# Runs fault.sh on the cluster under test.
fault() { timeout 90 "$FAULT_SH" --dir "$CLUSTER_DIR" "$@"; }

# Prints the state of node $1 in sinfo's long form (e.g. idle, down*, allocated).
node_state() { sl sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n1; }

# Succeeds if every node of the cluster is exactly idle (stricter than benchmarks/lib.sh's
# all_nodes_idle: not idle*, drained or idle~, and false when sinfo does not answer).
all_idle() {
  local states
  states="$(sl sinfo -h -N -o '%N %T' 2>/dev/null | sort -u)" || return 1
  [ -n "$states" ] && [ "$(awk '$2 != "idle"' <<<"$states" | wc -l)" -eq 0 ]
}

# Succeeds if node $1 is in sinfo state $2; node_idle: idle.
node_in_state() { [ "$(node_state "$1")" = "$2" ]; }
node_idle() { node_in_state "$1" idle; }

# Succeeds if node $1 is DOWN or NOT_RESPONDING (sinfo appends "*").
node_dead() { local s; s="$(node_state "$1")"; [[ "$s" == down* || "$s" == *'*' ]]; }

# Prints field $2 (e.g. ExitCode) of job $1 from scontrol show job.
job_field() {
  sl scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print substr($0, length(k) + 2); exit }'
}

# Succeeds if job $1 is in state $2.
job_in_state() { [ "$(job_state "$1")" = "$2" ]; }

# Submits a batch job named $JOB_PREFIX$1 (further sbatch arguments follow) and prints its id.
submit() {
  local name="$1"
  shift
  sl sbatch --parsable -J "$JOB_PREFIX$name" -D "$WORK" -o "$WORK/%x-%j.out" "$@" | cut -d';' -f1
}

# Prints the pids of processes of this cluster whose environment says they run on node $1
# (and belong to job $2 when given; $1 may be "" for any node).
node_task_pids() {
  local p env
  for p in /proc/[0-9]*; do
    env="$(tr '\0' '\n' 2>/dev/null <"$p/environ")" || continue
    grep -qx "SLURM_CLUSTER_NAME=$CLUSTER" <<<"$env" || continue
    [ -z "$1" ] || grep -qx "SLURMD_NODENAME=$1" <<<"$env" || continue
    [ -z "${2:-}" ] || grep -qx "SLURM_JOB_ID=$2" <<<"$env" || continue
    echo "${p#/proc/}"
  done
  return 0
}

# Succeeds if some process of this cluster runs on node $1.
node_has_tasks() { [ -n "$(node_task_pids "$1")" ]; }

# Succeeds if job $1 already runs its "sleep" task.
test_job_has_sleep() {
  local pid
  for pid in $(node_task_pids "" "$1"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != sleep ] || return 0
  done
  return 1
}

# Prints the state letter of process $1 (empty if gone).
pstate() { awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null || true; }

# Prints the slurmd port of node $1 (from the facts cluster.sh wrote).
node_port() {
  local idx="${1#"$PREFIX"}"
  echo $((SLURMD_PORT + idx - 1))
}

# Succeeds if something accepts TCP connections on 127.0.0.1:$1.
port_open() { timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# Cancels every job this test submitted.
cancel_test_jobs() {
  local -a ids
  mapfile -t ids < <(sl squeue -h -o '%i %j' 2>/dev/null | awk -v p="$JOB_PREFIX" 'index($2, p) == 1 { print $1 }')
  [ "${#ids[@]}" -eq 0 ] || sl scancel "${ids[@]}" 2>/dev/null || true
}

# --- steps: each runs under check_within (set -euo pipefail, a hard limit) -----------------------

# (1) every node answers and is idle.
step_all_idle() {
  wait_until 30 all_idle || fail_check "not all nodes idle within 30s"
  local n
  n="$(sl sinfo -h -N -o %N | sort -u | wc -l)"
  [ "$n" -ge 3 ] || fail_check "need at least 3 nodes, cluster has $n"
  echo "  $n nodes idle: $(sl sinfo -h -N -o %N | sort -u | tr '\n' ' ')"
}

# (2) a 2-node batch job runs a step on both nodes and completes with exit code 0.
step_job_completes() {
  local id out
  # shellcheck disable=SC2016
  id="$(submit complete -N2 --wrap 'srun -N2 -n2 bash -c "echo task \$SLURMD_NODENAME"')"
  wait_until 60 job_ended "$id" || fail_check "job $id not finished within 60s"
  [ "$(job_state "$id")" = COMPLETED ] || fail_check "job $id ended $(job_state "$id")"
  [ "$(job_field "$id" ExitCode)" = 0:0 ] || fail_check "job $id exit code $(job_field "$id" ExitCode)"
  out="$WORK/${JOB_PREFIX}complete-$id.out"
  [ "$(grep -c '^task ' "$out")" -eq 2 ] || fail_check "job output lacks two task lines: $(cat "$out")"
  [ "$(awk '/^task / { print $2 }' "$out" | sort -u | wc -l)" -eq 2 ] || fail_check "tasks did not run on 2 distinct nodes"
  echo "  job $id COMPLETED, ExitCode 0:0, tasks on $(awk '/^task / { print $2 }' "$out" | sort | tr '\n' ' ')"
}

# (3) crash a node of a running 2-node job: Slurm sees it dead in time; revive brings it back.
step_crash() {
  local id node t0 port
  id="$(submit crash -N2 --wrap 'srun -N2 -n2 sleep 600')"
  wait_until 30 job_in_state "$id" RUNNING || fail_check "job $id not running within 30s"
  node="$(nodes_of "$id" | tail -n1)"
  wait_until 15 node_has_tasks "$node" || fail_check "no tasks of job $id on $node within 15s"
  port="$(node_port "$node")"
  port_open "$port" || fail_check "slurmd port $port of $node not open before the crash"
  t0="$(date +%s.%N)"
  fault crash "$node"
  [ -z "$(node_task_pids "$node")" ] || fail_check "processes of $node survived the crash: $(node_task_pids "$node")"
  ! port_open "$port" || fail_check "$node still accepts connections on $port after the crash"
  wait_until $((SLURMD_TIMEOUT + 30)) node_dead "$node" || fail_check "$node not DOWN or NOT_RESPONDING within $((SLURMD_TIMEOUT + 30))s"
  echo "  $node seen as $(node_state "$node") $(seconds_since "$t0")s after the crash"
  cancel_test_jobs
  fault revive "$node"
  wait_until 30 node_idle "$node" || fail_check "$node not idle within 30s of revive"
  wait_until 30 all_idle || fail_check "not all nodes idle within 30s"
  wait_until 30 job_ended "$id" || fail_check "job $id not finished within 30s"
  timeout 60 "$CLUSTER_SH" reap --dir "$CLUSTER_DIR"
  [ -z "$(node_task_pids "" "$id")" ] || fail_check "processes of job $id left after reap: $(node_task_pids "" "$id")"
}

# (4) freeze a node of a running job: its processes stop, Slurm sees it dead; revive restores it.
step_freeze() {
  local id node t0 pid
  id="$(submit freeze -N2 --wrap 'srun -N2 -n2 sleep 600')"
  wait_until 30 job_in_state "$id" RUNNING || fail_check "job $id not running within 30s"
  node="$(nodes_of "$id" | tail -n1)"
  wait_until 15 node_has_tasks "$node" || fail_check "no tasks of job $id on $node within 15s"
  t0="$(date +%s.%N)"
  fault freeze "$node"
  for pid in $(node_task_pids "$node"); do
    [ "$(pstate "$pid")" = T ] || fail_check "task $pid on frozen $node is in state $(pstate "$pid"), not T"
  done
  wait_until $((SLURMD_TIMEOUT + 30)) node_dead "$node" || fail_check "$node not DOWN or NOT_RESPONDING within $((SLURMD_TIMEOUT + 30))s"
  echo "  frozen $node seen as $(node_state "$node") $(seconds_since "$t0")s after the freeze"
  cancel_test_jobs
  fault revive "$node"
  for pid in $(node_task_pids "$node"); do
    [ "$(pstate "$pid")" != T ] || fail_check "process $pid of $node still stopped after revive"
  done
  wait_until 30 node_idle "$node" || fail_check "$node not idle within 30s of revive"
  wait_until 30 all_idle || fail_check "not all nodes idle within 30s"
}

# (5) drain shows the node drained with its reason; undrain returns it to idle.
step_drain() {
  local node reason
  node="$(sl sinfo -h -N -o %N | sort -u | head -n1)"
  fault drain "$node" "tc drain check"
  wait_until 10 node_in_state "$node" drained || fail_check "$node not drained within 10s"
  reason="$(sl sinfo -h -N -n "$node" -o %E | head -n1)"
  [ "$reason" = "tc drain check" ] || fail_check "drain reason is '$reason'"
  fault undrain "$node"
  wait_until 20 node_idle "$node" || fail_check "$node not idle within 20s of undrain"
}

# (6) slurmctld restarts (and stays down a while) under a running job; the job survives.
step_restart_ctld() {
  local id node pid_before pid_after
  id="$(submit ctld -N1 --wrap 'srun sleep 600')"
  wait_until 30 job_in_state "$id" RUNNING || fail_check "job $id not running within 30s"
  node="$(nodes_of "$id")"
  wait_until 15 node_has_tasks "$node" || fail_check "no task of job $id within 15s"
  pid_before="$(node_task_pids "$node" "$id" | sort -n | tr '\n' ' ')"
  timeout 90 "$CLUSTER_SH" restart-ctld --dir "$CLUSTER_DIR"
  job_in_state "$id" RUNNING || fail_check "job $id is $(job_state "$id") after restart-ctld"
  timeout 60 "$CLUSTER_SH" stop-ctld --dir "$CLUSTER_DIR"
  ! timeout 20 scontrol ping 2>/dev/null | grep 'is UP' >/dev/null || fail_check "slurmctld still answers after stop-ctld"
  sleep 3
  timeout 60 "$CLUSTER_SH" start-ctld --dir "$CLUSTER_DIR"
  job_in_state "$id" RUNNING || fail_check "job $id is $(job_state "$id") after stop-ctld/start-ctld"
  pid_after="$(node_task_pids "$node" "$id" | sort -n | tr '\n' ' ')"
  [ "$pid_before" = "$pid_after" ] || fail_check "task processes changed: '$pid_before' -> '$pid_after'"
  echo "  job $id still RUNNING with the same tasks ($pid_after) after both restarts"
  cancel_test_jobs
  wait_until 30 all_idle || fail_check "job $id not gone from the nodes within 30s"
}

# True when job $1 of the second cluster (slurm.conf $2) completed.
second_job_completed() { SLURM_CONF="$2" job_in_state "$1" COMPLETED; }

# (7) a second cluster runs side by side with distinct nodes; stopping it leaves the first alive.
step_second_cluster() {
  local dir2="$WORK/second" conf2 nodes1 nodes2 id
  conf2="$(timeout 90 "$CLUSTER_SH" start --dir "$dir2" --nodes 2)"
  conf2="${conf2#SLURM_CONF=}"
  [ "$conf2" = "$dir2/slurm.conf" ] || fail_check "second cluster printed '$conf2'"
  nodes1="$(sl sinfo -h -N -o %N | sort -u)"
  nodes2="$(SLURM_CONF="$conf2" sl sinfo -h -N -o %N | sort -u)"
  [ -n "$nodes2" ] || fail_check "second cluster does not answer sinfo"
  [ -z "$(comm -12 <(echo "$nodes1") <(echo "$nodes2"))" ] || fail_check "clusters share node names"
  id="$(SLURM_CONF="$conf2" sl sbatch --parsable -N2 -D "$WORK" -o /dev/null --wrap 'srun -N2 true' | cut -d';' -f1)"
  wait_until 60 second_job_completed "$id" "$conf2" || fail_check "job $id of the second cluster not completed within 60s"
  all_idle || fail_check "first cluster not idle while the second runs"
  timeout 60 "$CLUSTER_SH" stop --dir "$dir2"
  if pgrep -f -- "$dir2/" >/dev/null; then
    fail_check "processes of the second cluster remain: $(pgrep -af -- "$dir2/" | tr '\n' ';')"
  fi
  wait_until 10 all_idle || fail_check "first cluster not idle within 10s after the second stopped"
  echo "  second cluster ($(echo "$nodes2" | tr '\n' ' ')) ran beside the first ($(echo "$nodes1" | tr '\n' ' '))"
}

# (8) a job of a non-root user (nobody) runs and can read the fault directory.
step_non_root() {
  local id out
  out="$WORK/nonroot"
  mkdir -p "$out"
  chown nobody "$out"
  id="$(cd "$out" && timeout 20 runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
    sbatch --parsable -J "${JOB_PREFIX}nonroot" -N2 -D "$out" -o "$out/%j.out" \
    --wrap "srun -N2 -n2 bash -c 'echo \$(id -un) \$SLURMD_NODENAME; test -d $CLUSTER_DIR/sticky-bad'")"
  wait_until 60 job_ended "$id" || fail_check "job $id not finished within 60s"
  [ "$(job_state "$id")" = COMPLETED ] || fail_check "job $id of nobody ended $(job_state "$id"): $(cat "$out/$id.out" 2>/dev/null)"
  [ "$(grep -c '^nobody ' "$out/$id.out")" -eq 2 ] || fail_check "unexpected output: $(cat "$out/$id.out")"
}

# (9) hang-job stops every process of a job (the job stays RUNNING); unhang-job continues them.
step_hang_job() {
  local id pid pids
  id="$(submit hang -N1 --wrap 'srun sleep 600')"
  wait_until 30 job_in_state "$id" RUNNING || fail_check "job $id not running within 30s"
  wait_until 15 test_job_has_sleep "$id" || fail_check "no task of job $id within 15s"
  fault hang-job "$id"
  pids="$(node_task_pids "" "$id")"
  for pid in $pids; do
    [ "$(pstate "$pid")" = T ] || fail_check "process $pid of hung job $id is in state $(pstate "$pid")"
  done
  job_in_state "$id" RUNNING || fail_check "hung job $id is $(job_state "$id")"
  fault unhang-job "$id"
  for pid in $pids; do
    [ "$(pstate "$pid")" != T ] || fail_check "process $pid of job $id still stopped after unhang-job"
  done
  echo "  job $id: $(wc -w <<<"$pids") processes stopped and continued"
  cancel_test_jobs
  wait_until 30 job_ended "$id" || fail_check "job $id not finished within 30s"
}

# (10) a task on a node marked sticky-bad sees the mark (and here exits 42); the mark clears.
step_sticky_bad() {
  local a b id script
  local -a nodes
  mapfile -t nodes < <(sl sinfo -h -N -o %N | sort -u | head -n2)
  a="${nodes[0]}" b="${nodes[1]}"
  # shellcheck disable=SC2016
  script='srun -N2 -n2 bash -c '"'"'if [ -e "$MLSUP_FAULT_DIR/sticky-bad/$SLURMD_NODENAME" ]; then exit 42; fi'"'"
  fault sticky-bad "$a"
  [ -e "$CLUSTER_DIR/sticky-bad/$a" ] || fail_check "sticky-bad did not create $CLUSTER_DIR/sticky-bad/$a"
  id="$(MLSUP_FAULT_DIR="$CLUSTER_DIR" submit sticky1 -N2 -w "$a,$b" --wrap "$script")"
  wait_until 60 job_ended "$id" || fail_check "job $id not finished within 60s"
  [ "$(job_field "$id" ExitCode)" = 42:0 ] || fail_check "job $id on sticky-bad $a: ExitCode $(job_field "$id" ExitCode), expected 42:0"
  fault sticky-clear "$a"
  [ ! -e "$CLUSTER_DIR/sticky-bad/$a" ] || fail_check "sticky-clear left $CLUSTER_DIR/sticky-bad/$a"
  id="$(MLSUP_FAULT_DIR="$CLUSTER_DIR" submit sticky2 -N2 -w "$a,$b" --wrap "$script")"
  wait_until 60 job_ended "$id" || fail_check "job $id not finished within 60s"
  [ "$(job_state "$id")" = COMPLETED ] || fail_check "job $id after sticky-clear ended $(job_state "$id")"
  wait_until 30 all_idle || fail_check "not all nodes idle within 30s"
}

# (11) status answers; a second start in the same directory is refused and harms nothing.
step_status_refuse() {
  timeout 30 "$CLUSTER_SH" status --dir "$CLUSTER_DIR" >/dev/null || fail_check "status failed on a running cluster"
  if timeout 60 "$CLUSTER_SH" start --dir "$CLUSTER_DIR" >/dev/null 2>&1; then
    fail_check "a second start in $CLUSTER_DIR was not refused"
  fi
  wait_until 10 all_idle || fail_check "not all nodes idle within 10s"
}

# --- runner --------------------------------------------------------------------------------------

# Brings the cluster back to a usable state after a failed step (best effort).
heal() {
  local node
  timeout 60 "$CLUSTER_SH" start-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1 || true
  cancel_test_jobs
  timeout 60 "$CLUSTER_SH" reap --dir "$CLUSTER_DIR" >/dev/null 2>&1 || true
  rm -f "$CLUSTER_DIR"/sticky-bad/* 2>/dev/null || true
  for node in $(sl sinfo -h -N -o %N | sort -u); do
    timeout 40 "$FAULT_SH" --dir "$CLUSTER_DIR" revive "$node" --timeout 30 >/dev/null 2>&1 || true
    case "$(node_state "$node")" in drain*) timeout 20 "$FAULT_SH" --dir "$CLUSTER_DIR" undrain "$node" 2>/dev/null || true ;; esac
  done
}

# Stops the clusters this test started (also after failures); keeps the work dir on failure.
cleanup() {
  local rc=$?
  if [ -f "$WORK/second/cluster.info" ]; then
    timeout 60 "$CLUSTER_SH" stop --dir "$WORK/second" >/dev/null 2>&1
  fi
  if [ -n "$OWN_DIR" ]; then
    timeout 60 "$CLUSTER_SH" stop --dir "$OWN_DIR" >/dev/null 2>&1 || echo "stopping $OWN_DIR failed"
  fi
  if [ "$rc" = 0 ] && [ "$FAILED" = 0 ]; then
    rm -rf "$WORK"
  else
    echo "logs kept in $WORK $OWN_DIR"
  fi
  exit "$rc"
}

[ "$(id -u)" = 0 ] || abort_suite "must run as root (fault injection signals Slurm's daemons)"
WORK="$(mktemp -d /tmp/mlsup-test-cluster.XXXXXX)"
chmod 0755 "$WORK"
OWN_DIR=""
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "${SLURM_CONF:-}" ]; then
  OWN_DIR="$WORK/cluster"
  t0=$(date +%s.%N)
  out="$(timeout 120 "$CLUSTER_SH" start --dir "$OWN_DIR" --nodes 4 --slurmd-timeout 10)" ||
    abort_suite "could not start a cluster of its own in $OWN_DIR"
  export SLURM_CONF="${out#SLURM_CONF=}"
  echo "started own cluster: $SLURM_CONF ($(seconds_since "$t0")s)"
fi
require_cluster
[ -f "$CLUSTER_DIR/cluster.info" ] || abort_suite "$CLUSTER_DIR was not started by cluster.sh (no cluster.info)"
# shellcheck disable=SC1091
source "$CLUSTER_DIR/cluster.info"
SLURMD_TIMEOUT="$(timeout 20 scontrol show config | awk '$1 == "SlurmdTimeout" { print $3 }')"
[[ "$SLURMD_TIMEOUT" =~ ^[0-9]+$ ]] || abort_suite "cannot read SlurmdTimeout"
# What the steps (children of check_within) read.
export SLURM_CONF CLUSTER_DIR WORK CLUSTER PREFIX SLURMD_PORT SLURMD_TIMEOUT CLUSTER_SH FAULT_SH JOB_PREFIX

check_within 40 "1 all nodes idle" step_all_idle || heal
check_within 90 "2 two-node job completes" step_job_completes || heal
check_within $((SLURMD_TIMEOUT + 150)) "3 crash and revive a node" step_crash || heal
check_within $((SLURMD_TIMEOUT + 150)) "4 freeze and revive a node" step_freeze || heal
check_within 60 "5 drain and undrain" step_drain || heal
check_within 240 "6 restart slurmctld under a job" step_restart_ctld || heal
check_within 240 "7 second cluster side by side" step_second_cluster || heal
check_within 90 "8 job of a non-root user" step_non_root || heal
check_within 90 "9 hang and unhang a job" step_hang_job || heal
check_within 150 "10 sticky-bad marker" step_sticky_bad || heal
check_within 90 "11 status and refused double start" step_status_refuse || heal

finish
