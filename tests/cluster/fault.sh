#!/usr/bin/env bash
# Injects faults into a local cluster started by cluster.sh: node crash, node freeze (power loss
# or network partition), revival, drain, a "sticky bad" node marker, hung jobs, controller
# restart. See tests/cluster/README.md.
set -euo pipefail

PROG=fault.sh
# shellcheck source-path=SCRIPTDIR source=cluster.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cluster.sh"

# Prints usage and exits with the given status.
fault_usage() {
  cat >&2 <<EOF
usage: $PROG --dir DIR COMMAND [ARGS]      (--dir may also follow COMMAND; default \$MLSUP_FAULT_DIR)
  crash NODE              SIGKILL the node's slurmd, slurmstepds and job processes
  freeze NODE             SIGSTOP the node's slurmd, slurmstepds and job processes
  revive NODE [--timeout S]  SIGCONT a frozen node / restart a crashed node's slurmd, then
                          wait (default 60 s) until the node is neither DOWN nor NOT_RESPONDING
  drain NODE [REASON]     drain the node
  undrain NODE            resume the node
  sticky-bad NODE         create DIR/sticky-bad/NODE (a test trainer on NODE must crash)
  sticky-clear NODE       remove DIR/sticky-bad/NODE
  hang-job JOBID          SIGSTOP every process of the job (not its slurmstepds)
  unhang-job JOBID        SIGCONT them again
  restart-ctld | stop-ctld | start-ctld   forwarded to cluster.sh
  freeze-ctld | thaw-ctld SIGSTOP / SIGCONT slurmctld (a controller that does not answer)
  snapshot-ctld DEST      copy slurmctld's saved state (StateSaveLocation) to folder DEST
  crash-ctld [--restore DEST]  SIGKILL slurmctld (no state saved), put back the state copied to
                          DEST when given (a crash that lost what came after it), start it again
EOF
  exit "${1:-2}"
}

# Fails unless $1 is a node of the loaded cluster.
check_node() {
  node_names | grep -xF -- "$1" >/dev/null || die "$1 is not a node of cluster $CLUSTER ($(node_names | tr '\n' ' '))"
}

# Prints the slurmd port of node $1.
node_port() {
  local idx="${1#"$PREFIX"}"
  echo $((SLURMD_PORT + idx - 1))
}

# Prints the State= field of node $1 as scontrol reports it (e.g. IDLE, DOWN+NOT_RESPONDING).
node_state() {
  SL_TIMEOUT=10 sl scontrol show node "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++)
    if ($i ~ /^State=/) { sub(/^State=/, "", $i); print $i; exit } }'
}

# Signals the processes of KIND regex on NODE until a scan finds none left in another state than
# the wanted one ("gone" for SIGKILL, T for SIGSTOP); prints how many distinct pids it signalled.
signal_until() {
  local sig="$1" want="$2" kinds="$3" node="$4" round pid PSTATE PPARENT
  local -A seen=()
  local -a pids pending
  for ((round = 0; round < 50; round++)); do
    mapfile -t pids < <(pids_of "$kinds" "$node")
    pending=()
    for pid in "${pids[@]}"; do
      read_stat "$pid" || continue
      [ "$want" = T ] && [ "$PSTATE" = T ] && { seen[$pid]=1; continue; }
      pending+=("$pid")
    done
    [ "${#pending[@]}" -gt 0 ] || { echo "${#seen[@]}"; return 0; }
    for pid in "${pending[@]}"; do seen[$pid]=1; done
    signal_pids "$sig" "${pending[@]}"
    [ "$sig" = KILL ] && signal_pids CONT "${pending[@]}"
    if [ "$want" = gone ]; then wait_pids_gone 5 "${pending[@]}" || true; else sleep 0.05; fi
  done
  die "processes of $node keep appearing; gave up after $round rounds"
}

# fault.sh crash NODE: kills the node's slurmd and every process of the node in this cluster.
cmd_crash() {
  local node="${1:?crash needs NODE}" n port deadline
  check_node "$node"
  n="$(signal_until KILL gone 'slurmd|slurmstepd|helper|task' "$node")"
  port="$(node_port "$node")"
  deadline=$((SECONDS + 10))
  while ss -Htln "sport = :$port" | grep . >/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "port $port of $node still listening after the crash"
    sleep 0.1
  done
  log "crashed $node: killed $n processes, port $port closed"
}

# fault.sh freeze NODE: stops slurmd first (so it starts nothing new), then its steps and tasks.
cmd_freeze() {
  local node="${1:?freeze needs NODE}" a b
  check_node "$node"
  a="$(signal_until STOP T slurmd "$node")"
  [ "$a" -gt 0 ] || die "no slurmd of $node is running"
  b="$(signal_until STOP T 'slurmd|slurmstepd|helper|task' "$node")"
  log "froze $node: $b processes stopped"
}

# fault.sh revive NODE: continues frozen processes, restarts a missing slurmd, waits for the node.
cmd_revive() {
  local node="${1:?revive needs NODE}" limit=60 state deadline
  shift
  [ "${1:-}" != --timeout ] || limit="${2:?}"
  check_node "$node"
  local -a pids
  mapfile -t pids < <(pids_of 'slurmd|slurmstepd|helper|task' "$node")
  [ "${#pids[@]}" -eq 0 ] || signal_pids CONT "${pids[@]}"
  if [ -z "$(pids_of slurmd "$node")" ]; then
    log "starting slurmd of $node"
    start_slurmd "$node"
  fi
  deadline=$((SECONDS + limit))
  while :; do
    state="$(node_state "$node" || true)"
    if [ -n "$state" ] && [[ "$state" != *DOWN* ]] && [[ "$state" != *NOT_RESPONDING* ]]; then
      log "revived $node: state $state after ${SECONDS}s"
      return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || {
      tail_logs "$DIR/log/slurmd-$node.log"
      die "$node still ${state:-unknown} after ${limit}s"
    }
    sleep 0.2
  done
}

# fault.sh drain NODE [REASON]: drains the node.
cmd_drain() {
  local node="${1:?drain needs NODE}" reason="${2:-drained by fault.sh}"
  check_node "$node"
  sl scontrol update NodeName="$node" State=DRAIN Reason="$reason"
  log "drained $node ($reason)"
}

# fault.sh undrain NODE: resumes the node.
cmd_undrain() {
  local node="${1:?undrain needs NODE}"
  check_node "$node"
  sl scontrol update NodeName="$node" State=RESUME
  log "resumed $node"
}

# fault.sh sticky-bad NODE: marks the node bad for training jobs.
cmd_sticky_bad() {
  local node="${1:?sticky-bad needs NODE}"
  check_node "$node"
  mkdir -p "$DIR/sticky-bad"
  chmod 0755 "$DIR/sticky-bad"
  : >"$DIR/sticky-bad/$node"
  chmod 0644 "$DIR/sticky-bad/$node"
  log "marked $node sticky-bad ($DIR/sticky-bad/$node)"
}

# fault.sh sticky-clear NODE: removes the mark.
cmd_sticky_clear() {
  local node="${1:?sticky-clear needs NODE}"
  check_node "$node"
  rm -f "$DIR/sticky-bad/$node"
  log "cleared sticky-bad mark of $node"
}

# Prints the pids of every process of job $1 in this cluster except its slurmstepds.
job_pids() {
  list_procs | awk -v j="$1" '$2 == "task" && $4 == j { print $1 }'
}

# fault.sh hang-job JOBID: stops every process of the job, repeating until none still runs.
cmd_hang_job() {
  local job="${1:?hang-job needs JOBID}" round pid PSTATE PPARENT
  local -a pids running
  local -A seen=()
  [[ "$job" =~ ^[0-9]+$ ]] || die "JOBID must be a number"
  for ((round = 0; round < 50; round++)); do
    mapfile -t pids < <(job_pids "$job")
    running=()
    for pid in "${pids[@]}"; do
      read_stat "$pid" || continue
      seen[$pid]=1
      [ "$PSTATE" = T ] || running+=("$pid")
    done
    [ "${#running[@]}" -gt 0 ] || break
    signal_pids STOP "${running[@]}"
    sleep 0.05
  done
  [ "${#seen[@]}" -gt 0 ] || die "no process of job $job found in cluster $CLUSTER"
  log "hung job $job: ${#seen[@]} processes stopped"
}

# fault.sh unhang-job JOBID: continues every process of the job.
cmd_unhang_job() {
  local job="${1:?unhang-job needs JOBID}"
  local -a pids
  [[ "$job" =~ ^[0-9]+$ ]] || die "JOBID must be a number"
  mapfile -t pids < <(job_pids "$job")
  [ "${#pids[@]}" -gt 0 ] || die "no process of job $job found in cluster $CLUSTER"
  signal_pids CONT "${pids[@]}"
  log "continued job $job: ${#pids[@]} processes"
}

# fault.sh freeze-ctld / thaw-ctld: stops or continues slurmctld (it accepts connections, answers nothing).
cmd_signal_ctld() {
  local -a pids
  mapfile -t pids < <(pids_of slurmctld)
  [ "${#pids[@]}" -gt 0 ] || die "slurmctld of $CLUSTER is not running"
  signal_pids "$1" "${pids[@]}"
  log "slurmctld of $CLUSTER: SIG$1"
}

# fault.sh snapshot-ctld DEST: a copy of the controller's saved state, for a crash that loses what follows.
cmd_snapshot_ctld() {
  local dest="${1:?snapshot-ctld needs DEST}"
  rm -rf "$dest"
  cp -a "$DIR/state" "$dest"
  log "copied slurmctld's state to $dest"
}

# fault.sh crash-ctld [--restore DEST]: slurmctld killed at once, its state as copied to DEST when given.
cmd_crash_ctld() {
  local restore=""
  [ "${1:-}" != --restore ] || restore="${2:?--restore needs DEST}"
  [ -z "$restore" ] || [ -d "$restore" ] || die "no state copy at $restore"
  local -a pids
  mapfile -t pids < <(pids_of slurmctld)
  if [ "${#pids[@]}" -gt 0 ]; then
    signal_pids KILL "${pids[@]}"
    signal_pids CONT "${pids[@]}"
    wait_pids_gone 10 "${pids[@]}" || die "slurmctld ${pids[*]} does not die"
  fi
  local deadline=$((SECONDS + 10))
  while ss -Htln "sport = :$CTLD_PORT" | grep . >/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "port $CTLD_PORT still listening after slurmctld was killed"
    sleep 0.1
  done
  rm -f "$DIR/run/slurmctld.pid"
  if [ -n "$restore" ]; then
    rm -rf "$DIR/state"
    cp -a "$restore" "$DIR/state"
  fi
  log "slurmctld of $CLUSTER killed${restore:+, its state put back to $restore}"
  "$CLUSTER_SH_PATH" start-ctld --dir "$DIR"
}

# Parses "--dir DIR" anywhere in the arguments, loads the cluster and dispatches the command.
fault_main() {
  local dir="${MLSUP_FAULT_DIR:-}" cmd=""
  local -a rest=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) dir="${2:?--dir needs DIR}"; shift 2 ;;
      -h | --help) fault_usage 0 ;;
      *) rest+=("$1"); shift ;;
    esac
  done
  [ "${#rest[@]}" -gt 0 ] || fault_usage
  cmd="${rest[0]}"
  rest=("${rest[@]:1}")
  [ -n "$dir" ] || { log "--dir DIR is required"; fault_usage; }
  set_paths "$dir"
  load_info
  case "$cmd" in
    crash) cmd_crash "${rest[@]}" ;;
    freeze) cmd_freeze "${rest[@]}" ;;
    revive) cmd_revive "${rest[@]}" ;;
    drain) cmd_drain "${rest[@]}" ;;
    undrain) cmd_undrain "${rest[@]}" ;;
    sticky-bad) cmd_sticky_bad "${rest[@]}" ;;
    sticky-clear) cmd_sticky_clear "${rest[@]}" ;;
    hang-job) cmd_hang_job "${rest[@]}" ;;
    unhang-job) cmd_unhang_job "${rest[@]}" ;;
    restart-ctld | stop-ctld | start-ctld) exec "$CLUSTER_SH_PATH" "$cmd" --dir "$DIR" ;;
    freeze-ctld) cmd_signal_ctld STOP ;;
    thaw-ctld) cmd_signal_ctld CONT ;;
    snapshot-ctld) cmd_snapshot_ctld "${rest[@]}" ;;
    crash-ctld) cmd_crash_ctld "${rest[@]}" ;;
    *) log "unknown command: $cmd"; fault_usage ;;
  esac
}

fault_main "$@"
