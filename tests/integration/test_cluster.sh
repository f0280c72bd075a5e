#!/usr/bin/env bash
# Integration test of tests/cluster/cluster.sh and fault.sh against a real local Slurm cluster.
# Uses the cluster named by $SLURM_CONF (started with cluster.sh, 4 nodes), or starts its own in a
# temporary directory and stops it on exit. Every step runs under a hard timeout.
# Prints the wall time of each step and ends with exactly one line "N passed, M failed".
set -euo pipefail

PROG=test_cluster.sh
SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
ROOT="$(cd "$(dirname "$SELF")/../.." && pwd)"
CLUSTER_SH="$ROOT/tests/cluster/cluster.sh"
FAULT_SH="$ROOT/tests/cluster/fault.sh"
JOB_PREFIX=mlsup-tc-

# Prints a message to stderr, prefixed with the script name.
log() { echo "$PROG: $*" >&2; }

# Fails the current step with a message.
fail() { log "FAIL: $*"; exit 1; }

# Prints seconds since the epoch with milliseconds.
now() { date +%s.%N; }

# Prints the difference of two timestamps in seconds with one decimal.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Runs a Slurm client command against the cluster under test, bounded in time.
sl() { timeout 20 "$@"; }

# Runs fault.sh on the cluster under test.
fault() { timeout 90 "$FAULT_SH" --dir "$CDIR" "$@"; }

# Polls command "$@" every 0.5 s until it succeeds or $1 seconds pass; fails the step on timeout.
wait_for() {
  local limit="$1" what="$2" deadline
  shift 2
  deadline=$(($(date +%s) + limit))
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${limit}s waiting for: $what"
    sleep 0.5
  done
}

# Prints the state of node $1 in sinfo's long form (e.g. idle, down*, allocated).
node_state() { sl sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n1; }

# Succeeds if every node of the cluster is idle.
all_idle() {
  local states
  states="$(sl sinfo -h -N -o '%N %T' 2>/dev/null | sort -u)" || return 1
  [ -n "$states" ] && [ "$(awk '$2 != "idle"' <<<"$states" | wc -l)" -eq 0 ]
}

# Succeeds if node $1 is idle.
node_idle() { [ "$(node_state "$1")" = idle ]; }

# Succeeds if node $1 is DOWN or NOT_RESPONDING (sinfo appends "*").
node_dead() { local s; s="$(node_state "$1")"; [[ "$s" == down* || "$s" == *'*' ]]; }

# Prints field $2 (e.g. JobState) of job $1 from scontrol show job.
job_field() {
  sl scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print substr($0, length(k) + 2); exit }'
}

# Succeeds if job $1 is in state $2.
job_in_state() { [ "$(job_field "$1" JobState)" = "$2" ]; }

# Succeeds if job $1 has finished (any final state).
job_finished() {
  case "$(job_field "$1" JobState)" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED) return 0 ;;
  esac
  return 1
}

# Submits a batch job named $JOB_PREFIX$1 (further sbatch arguments follow) and prints its id.
submit() {
  local name="$1"
  shift
  sl sbatch --parsable -J "$JOB_PREFIX$name" -D "$WORK" -o "$WORK/%x-%j.out" "$@" | cut -d';' -f1
}

# Prints the node names of job $1, one per line.
job_nodes() { sl scontrol show hostnames "$(job_field "$1" NodeList)"; }

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

# Succeeds if node $1 is in sinfo state $2.
node_in_state() { [ "$(node_state "$1")" = "$2" ]; }

# Prints the state letter of process $1 (empty if gone).
pstate() { awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null || true; }

# Prints the slurmd port of node $1 (from the facts cluster.sh wrote).
node_port() {
  local idx="${1#"$PREFIX"}"
  echo $((SLURMD_PORT + idx - 1))
}

# Succeeds if something accepts TCP connections on 127.0.0.1:$1.
port_open() { timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# Cancels every job this test submitted and waits until they are gone from the nodes.
cancel_test_jobs() {
  local -a ids
  mapfile -t ids < <(sl squeue -h -o '%i %j' 2>/dev/null | awk -v p="$JOB_PREFIX" 'index($2, p) == 1 { print $1 }')
  [ "${#ids[@]}" -eq 0 ] || sl scancel "${ids[@]}" 2>/dev/null || true
}

# --- steps ---------------------------------------------------------------------------------

# (1) every node answers and is idle.
step_all_idle() {
  wait_for 30 "all nodes idle" all_idle
  local n
  n="$(sl sinfo -h -N -o %N | sort -u | wc -l)"
  [ "$n" -ge 3 ] || fail "need at least 3 nodes, cluster has $n"
  log "$n nodes idle: $(sl sinfo -h -N -o %N | sort -u | tr '\n' ' ')"
}

# (2) a 2-node batch job runs a step on both nodes and completes with exit code 0.
step_job_completes() {
  local id out
  # shellcheck disable=SC2016
  id="$(submit complete -N2 --wrap 'srun -N2 -n2 bash -c "echo task \$SLURMD_NODENAME"')"
  wait_for 60 "job $id to finish" job_finished "$id"
  [ "$(job_field "$id" JobState)" = COMPLETED ] || fail "job $id ended $(job_field "$id" JobState)"
  [ "$(job_field "$id" ExitCode)" = 0:0 ] || fail "job $id exit code $(job_field "$id" ExitCode)"
  out="$WORK/${JOB_PREFIX}complete-$id.out"
  [ "$(grep -c '^task ' "$out")" -eq 2 ] || fail "job output lacks two task lines: $(cat "$out")"
  [ "$(awk '/^task / { print $2 }' "$out" | sort -u | wc -l)" -eq 2 ] || fail "tasks did not run on 2 distinct nodes"
  log "job $id COMPLETED, ExitCode 0:0, tasks on $(awk '/^task / { print $2 }' "$out" | sort | tr '\n' ' ')"
}

# (3) crash a node of a running 2-node job: Slurm sees it dead in time; revive brings it back.
step_crash() {
  local id node t0 port
  id="$(submit crash -N2 --wrap 'srun -N2 -n2 sleep 600')"
  wait_for 30 "job $id running" job_in_state "$id" RUNNING
  node="$(job_nodes "$id" | tail -n1)"
  wait_for 15 "tasks of job $id on $node" node_has_tasks "$node"
  port="$(node_port "$node")"
  port_open "$port" || fail "slurmd port $port of $node not open before the crash"
  t0="$(now)"
  fault crash "$node"
  [ -z "$(node_task_pids "$node")" ] || fail "processes of $node survived the crash: $(node_task_pids "$node")"
  ! port_open "$port" || fail "$node still accepts connections on $port after the crash"
  wait_for $((SLURMD_TIMEOUT + 30)) "$node DOWN or NOT_RESPONDING" node_dead "$node"
  log "$node seen as $(node_state "$node") $(elapsed "$t0" "$(now)")s after the crash"
  cancel_test_jobs
  fault revive "$node"
  wait_for 30 "$node idle after revive" node_idle "$node"
  wait_for 30 "all nodes idle" all_idle
  wait_for 30 "job $id finished" job_finished "$id"
  timeout 60 "$CLUSTER_SH" reap --dir "$CDIR"
  [ -z "$(node_task_pids "" "$id")" ] || fail "processes of job $id left after reap: $(node_task_pids "" "$id")"
}

# (4) freeze a node of a running job: its processes stop, Slurm sees it dead; revive restores it.
step_freeze() {
  local id node t0 pid
  id="$(submit freeze -N2 --wrap 'srun -N2 -n2 sleep 600')"
  wait_for 30 "job $id running" job_in_state "$id" RUNNING
  node="$(job_nodes "$id" | tail -n1)"
  wait_for 15 "tasks of job $id on $node" node_has_tasks "$node"
  t0="$(now)"
  fault freeze "$node"
  for pid in $(node_task_pids "$node"); do
    [ "$(pstate "$pid")" = T ] || fail "task $pid on frozen $node is in state $(pstate "$pid"), not T"
  done
  wait_for $((SLURMD_TIMEOUT + 30)) "$node DOWN or NOT_RESPONDING" node_dead "$node"
  log "frozen $node seen as $(node_state "$node") $(elapsed "$t0" "$(now)")s after the freeze"
  cancel_test_jobs
  fault revive "$node"
  for pid in $(node_task_pids "$node"); do
    [ "$(pstate "$pid")" != T ] || fail "process $pid of $node still stopped after revive"
  done
  wait_for 30 "$node idle after revive" node_idle "$node"
  wait_for 30 "all nodes idle" all_idle
}

# (5) drain shows the node drained with its reason; undrain returns it to idle.
step_drain() {
  local node reason
  node="$(sl sinfo -h -N -o %N | sort -u | head -n1)"
  fault drain "$node" "tc drain check"
  wait_for 10 "$node drained" node_in_state "$node" drained
  reason="$(sl sinfo -h -N -n "$node" -o %E | head -n1)"
  [ "$reason" = "tc drain check" ] || fail "drain reason is '$reason'"
  fault undrain "$node"
  wait_for 20 "$node idle after undrain" node_idle "$node"
}

# (6) slurmctld restarts (and stays down a while) under a running job; the job survives.
step_restart_ctld() {
  local id node pid_before pid_after
  id="$(submit ctld -N1 --wrap 'srun sleep 600')"
  wait_for 30 "job $id running" job_in_state "$id" RUNNING
  node="$(job_nodes "$id")"
  wait_for 15 "task of job $id" node_has_tasks "$node"
  pid_before="$(node_task_pids "$node" "$id" | sort -n | tr '\n' ' ')"
  timeout 90 "$CLUSTER_SH" restart-ctld --dir "$CDIR"
  job_in_state "$id" RUNNING || fail "job $id is $(job_field "$id" JobState) after restart-ctld"
  timeout 60 "$CLUSTER_SH" stop-ctld --dir "$CDIR"
  ! timeout 20 scontrol ping 2>/dev/null | grep -q 'is UP' || fail "slurmctld still answers after stop-ctld"
  sleep 3
  timeout 60 "$CLUSTER_SH" start-ctld --dir "$CDIR"
  job_in_state "$id" RUNNING || fail "job $id is $(job_field "$id" JobState) after stop-ctld/start-ctld"
  pid_after="$(node_task_pids "$node" "$id" | sort -n | tr '\n' ' ')"
  [ "$pid_before" = "$pid_after" ] || fail "task processes changed: '$pid_before' -> '$pid_after'"
  log "job $id still RUNNING with the same tasks ($pid_after) after both restarts"
  cancel_test_jobs
  wait_for 30 "job $id gone from the nodes" all_idle
}

# (7) a second cluster runs side by side with distinct nodes; stopping it leaves the first alive.
step_second_cluster() {
  local dir2="$WORK/second" conf2 nodes1 nodes2 id
  conf2="$(timeout 90 "$CLUSTER_SH" start --dir "$dir2" --nodes 2)"
  conf2="${conf2#SLURM_CONF=}"
  SECOND_STARTED=1
  [ "$conf2" = "$dir2/slurm.conf" ] || fail "second cluster printed '$conf2'"
  nodes1="$(sl sinfo -h -N -o %N | sort -u)"
  nodes2="$(SLURM_CONF="$conf2" sl sinfo -h -N -o %N | sort -u)"
  [ -n "$nodes2" ] || fail "second cluster does not answer sinfo"
  [ -z "$(comm -12 <(echo "$nodes1") <(echo "$nodes2"))" ] || fail "clusters share node names"
  id="$(SLURM_CONF="$conf2" sl sbatch --parsable -N2 -D "$WORK" -o /dev/null --wrap 'srun -N2 true' | cut -d';' -f1)"
  wait_for 60 "job $id of the second cluster to finish" env SLURM_CONF="$conf2" bash -c \
    "scontrol show job $id | grep -q 'JobState=COMPLETED'"
  all_idle || fail "first cluster not idle while the second runs"
  timeout 60 "$CLUSTER_SH" stop --dir "$dir2"
  SECOND_STARTED=0
  if pgrep -f -- "$dir2/" >/dev/null; then
    fail "processes of the second cluster remain: $(pgrep -af -- "$dir2/" | tr '\n' ';')"
  fi
  wait_for 10 "first cluster idle after the second stopped" all_idle
  log "second cluster ($(echo "$nodes2" | tr '\n' ' ')) ran beside the first ($(echo "$nodes1" | tr '\n' ' '))"
}

# (8) a job of a non-root user (nobody) runs and can read the fault directory.
step_non_root() {
  local id out
  out="$WORK/nonroot"
  mkdir -p "$out"
  chown nobody "$out"
  id="$(cd "$out" && timeout 20 runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
    sbatch --parsable -J "${JOB_PREFIX}nonroot" -N2 -D "$out" -o "$out/%j.out" \
    --wrap "srun -N2 -n2 bash -c 'echo \$(id -un) \$SLURMD_NODENAME; test -d $CDIR/sticky-bad'")"
  wait_for 60 "job $id to finish" job_finished "$id"
  [ "$(job_field "$id" JobState)" = COMPLETED ] || fail "job $id of nobody ended $(job_field "$id" JobState): $(cat "$out/$id.out" 2>/dev/null)"
  [ "$(grep -c '^nobody ' "$out/$id.out")" -eq 2 ] || fail "unexpected output: $(cat "$out/$id.out")"
}

# (9) hang-job stops every process of a job (the job stays RUNNING); unhang-job continues them.
step_hang_job() {
  local id pid pids
  id="$(submit hang -N1 --wrap 'srun sleep 600')"
  wait_for 30 "job $id running" job_in_state "$id" RUNNING
  wait_for 15 "tasks of job $id" test_job_has_sleep "$id"
  fault hang-job "$id"
  pids="$(node_task_pids "" "$id")"
  for pid in $pids; do
    [ "$(pstate "$pid")" = T ] || fail "process $pid of hung job $id is in state $(pstate "$pid")"
  done
  job_in_state "$id" RUNNING || fail "hung job $id is $(job_field "$id" JobState)"
  fault unhang-job "$id"
  for pid in $pids; do
    [ "$(pstate "$pid")" != T ] || fail "process $pid of job $id still stopped after unhang-job"
  done
  log "job $id: $(wc -w <<<"$pids") processes stopped and continued"
  cancel_test_jobs
  wait_for 30 "job $id finished" job_finished "$id"
}

# Succeeds if job $1 already runs its "sleep" task.
test_job_has_sleep() {
  local pid
  for pid in $(node_task_pids "" "$1"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != sleep ] || return 0
  done
  return 1
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
  [ -e "$CDIR/sticky-bad/$a" ] || fail "sticky-bad did not create $CDIR/sticky-bad/$a"
  id="$(MLSUP_FAULT_DIR="$CDIR" submit sticky1 -N2 -w "$a,$b" --wrap "$script")"
  wait_for 60 "job $id finished" job_finished "$id"
  [ "$(job_field "$id" ExitCode)" = 42:0 ] || fail "job $id on sticky-bad $a: ExitCode $(job_field "$id" ExitCode), expected 42:0"
  fault sticky-clear "$a"
  [ ! -e "$CDIR/sticky-bad/$a" ] || fail "sticky-clear left $CDIR/sticky-bad/$a"
  id="$(MLSUP_FAULT_DIR="$CDIR" submit sticky2 -N2 -w "$a,$b" --wrap "$script")"
  wait_for 60 "job $id finished" job_finished "$id"
  [ "$(job_field "$id" JobState)" = COMPLETED ] || fail "job $id after sticky-clear ended $(job_field "$id" JobState)"
  wait_for 30 "all nodes idle" all_idle
}

# (11) status answers; a second start in the same directory is refused and harms nothing.
step_status_refuse() {
  timeout 30 "$CLUSTER_SH" status --dir "$CDIR" >/dev/null || fail "status failed on a running cluster"
  if timeout 60 "$CLUSTER_SH" start --dir "$CDIR" >/dev/null 2>&1; then
    fail "a second start in $CDIR was not refused"
  fi
  wait_for 10 "all nodes idle" all_idle
}

# --- runner --------------------------------------------------------------------------------

# Brings the cluster back to a usable state after a failed step (best effort).
heal() {
  local node
  timeout 60 "$CLUSTER_SH" start-ctld --dir "$CDIR" >/dev/null 2>&1 || true
  cancel_test_jobs
  timeout 60 "$CLUSTER_SH" reap --dir "$CDIR" >/dev/null 2>&1 || true
  rm -f "$CDIR"/sticky-bad/* 2>/dev/null || true
  for node in $(sl sinfo -h -N -o %N | sort -u); do
    timeout 40 "$FAULT_SH" --dir "$CDIR" revive "$node" --timeout 30 >/dev/null 2>&1 || true
    case "$(node_state "$node")" in drain*) timeout 20 "$FAULT_SH" --dir "$CDIR" undrain "$node" 2>/dev/null || true ;; esac
  done
}

# Runs one step under a hard timeout in a child process and records its result and wall time.
run_step() {
  local name="$1" fn="$2" limit="$3" t0 rc=0
  t0="$(now)"
  timeout -k 5 "$limit" "$SELF" --step "$fn" || rc=$?
  if [ "$rc" = 0 ]; then
    PASSED=$((PASSED + 1))
    echo "$PROG: PASS $name ($(elapsed "$t0" "$(now)") s)"
  else
    FAILED=$((FAILED + 1))
    [ "$rc" != 124 ] || log "step $name hit its ${limit}s timeout"
    echo "$PROG: FAIL $name ($(elapsed "$t0" "$(now)") s)"
    heal
  fi
}

# Stops the clusters this test started (also after failures); keeps the work dir on failure.
cleanup() {
  local rc=$?
  set +e
  if [ "${SECOND_STARTED:-0}" = 1 ] || [ -f "$WORK/second/cluster.info" ]; then
    timeout 60 "$CLUSTER_SH" stop --dir "$WORK/second" >/dev/null 2>&1
  fi
  if [ -n "${OWN_DIR:-}" ]; then
    timeout 60 "$CLUSTER_SH" stop --dir "$OWN_DIR" >/dev/null 2>&1 || log "stopping $OWN_DIR failed"
  fi
  if [ "$rc" = 0 ] && [ "${FAILED:-1}" = 0 ]; then
    rm -rf "$WORK"
  else
    log "logs kept in $WORK ${OWN_DIR:-}"
  fi
  exit "$rc"
}

# Sets up (or adopts) the cluster, runs every step, prints the summary.
main() {
  [ "$(id -u)" = 0 ] || { log "must run as root (fault injection signals Slurm's daemons)"; exit 2; }
  WORK="$(mktemp -d /tmp/mlsup-test-cluster.XXXXXX)"
  chmod 0755 "$WORK"
  OWN_DIR="" SECOND_STARTED=0 PASSED=0 FAILED=0
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  local t0 out
  t0="$(now)"
  if [ -z "${SLURM_CONF:-}" ]; then
    OWN_DIR="$WORK/cluster"
    out="$(timeout 120 "$CLUSTER_SH" start --dir "$OWN_DIR" --nodes 4 --slurmd-timeout 10)"
    SLURM_CONF="${out#SLURM_CONF=}"
    log "started own cluster: $SLURM_CONF ($(elapsed "$t0" "$(now)") s)"
  fi
  CDIR="$(dirname "$SLURM_CONF")"
  [ -f "$CDIR/cluster.info" ] || { log "$CDIR was not started by cluster.sh (no cluster.info)"; exit 2; }
  # shellcheck disable=SC1091
  source "$CDIR/cluster.info"
  SLURMD_TIMEOUT="$(timeout 20 env SLURM_CONF="$SLURM_CONF" scontrol show config |
    awk '$1 == "SlurmdTimeout" { print $3 }')"
  [[ "$SLURMD_TIMEOUT" =~ ^[0-9]+$ ]] || { log "cannot read SlurmdTimeout"; exit 2; }
  export SLURM_CONF CDIR WORK CLUSTER PREFIX NODES SLURMD_PORT SLURMD_TIMEOUT

  run_step "1 all nodes idle" step_all_idle 40
  run_step "2 two-node job completes" step_job_completes 90
  run_step "3 crash and revive a node" step_crash $((SLURMD_TIMEOUT + 150))
  run_step "4 freeze and revive a node" step_freeze $((SLURMD_TIMEOUT + 150))
  run_step "5 drain and undrain" step_drain 60
  run_step "6 restart slurmctld under a job" step_restart_ctld 240
  run_step "7 second cluster side by side" step_second_cluster 240
  run_step "8 job of a non-root user" step_non_root 90
  run_step "9 hang and unhang a job" step_hang_job 90
  run_step "10 sticky-bad marker" step_sticky_bad 150
  run_step "11 status and refused double start" step_status_refuse 90

  echo "$PROG: total $(elapsed "$t0" "$(now)") s"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" = 0 ]
}

if [ "${1:-}" = --step ]; then
  "$2"
else
  main "$@"
fi
