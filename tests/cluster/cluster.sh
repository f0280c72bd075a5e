#!/usr/bin/env bash
# Starts, stops and inspects a complete local Slurm cluster (own munged, one slurmctld, N slurmd)
# on loopback, entirely contained in one directory. See tests/cluster/README.md.
#
# This file can also be sourced (fault.sh does) to reuse its process-finding functions;
# main only runs when the file is executed.
set -euo pipefail

# shellcheck disable=SC2034  # used by fault.sh, which sources this file
CLUSTER_SH_PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
PROG="${PROG:-cluster.sh}"
PORT_LOCK="${MLSUP_CLUSTER_PORT_LOCK:-/tmp/mlsup-cluster-ports.lock}"
DAEMON_PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
umask 022

# Prints a message to stderr, prefixed with the script name.
log() { echo "$PROG: $*" >&2; }

# Prints an error message and exits 1.
die() { log "error: $*"; exit 1; }

# Prints usage and exits with the given status.
usage() {
  cat >&2 <<EOF
usage: $PROG start --dir DIR [--nodes N] [--slurmd-timeout S] [--min-job-age S]
                   [--plugstack FILE] [--name PREFIX] [--idle-timeout S] [--accounting] [--node-addrs]
       $PROG stop --dir DIR [--clean]
       $PROG status --dir DIR
       $PROG stop-ctld --dir DIR
       $PROG start-ctld --dir DIR
       $PROG restart-ctld --dir DIR
       $PROG reap --dir DIR
EOF
  exit "${1:-2}"
}

# Turns a path into an absolute, normalised one (the path need not exist).
abs_path() { realpath -m -- "$1"; }

# Sets the global path variables of the cluster living in directory $1.
set_paths() {
  DIR="$(abs_path "$1")"
  CONF="$DIR/slurm.conf"
  INFO="$DIR/cluster.info"
  MUNGE_DIR="$DIR/munge"
  MUNGE_SOCK="$MUNGE_DIR/munge.sock"
  DB_DIR="$DIR/db"
  DB_SOCK="$DB_DIR/mysqld.sock"
  DBD_CONF="$DIR/slurmdbd.conf"
}

# Loads the cluster facts (names, ports, node count) written at start; fails if there are none.
load_info() {
  [ -f "$INFO" ] || die "no cluster was ever started in $DIR (missing $INFO)"
  # shellcheck disable=SC1090
  source "$INFO"
}

# Prints a short hash of a string, as 6 lowercase hex digits.
short_hash() { printf '%s' "$1" | sha256sum | cut -c1-6; }

# Prints the node names of the loaded cluster, one per line.
node_names() {
  local i
  for ((i = 1; i <= NODES; i++)); do echo "${PREFIX}${i}"; done
}

# The nodes' NodeAddr: 127.0.0.1 for all, or with --node-addrs one address each, 127.0.0.(10 + N) for
# node N (all of 127/8 is this machine's loopback), so that an address names its node.
node_addrs() { if [ "${NODE_ADDRS:-0}" = 1 ]; then echo "127.0.0.[11-$((10 + NODES))]"; else echo 127.0.0.1; fi; }

# Runs a Slurm client command against this cluster, bounded in time.
sl() { SLURM_CONF="$CONF" timeout "${SL_TIMEOUT:-15}" "$@"; }

# --- process identification --------------------------------------------------------------

# Reads /proc/PID/stat into PSTATE (state letter: R, S, T, Z, ...) and PPARENT (parent pid);
# fails if the process is gone. No subshell, so it is cheap in loops over every process.
read_stat() {
  local stat rest
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  rest="${stat##*) }"
  PSTATE="${rest%% *}"
  rest="${rest#* }"
  PPARENT="${rest%% *}"
}

# Succeeds if process $1 exists and is not a zombie.
proc_alive() {
  local PSTATE PPARENT
  read_stat "$1" && [ "$PSTATE" != Z ]
}

# Lists every live process of this cluster as lines "PID KIND NODE JOBID" (procs.py says how each
# is recognised): KIND is munged, slurmctld, slurmd, slurmstepd, helper (another child of a daemon,
# e.g. slurmscriptd) or task; NODE and JOBID are "-" when unknown or not applicable. The caller, its
# ancestors and its children are never listed.
list_procs() {
  /usr/bin/python3 "$(dirname "$CLUSTER_SH_PATH")/procs.py" --dir "$DIR" --conf "$CONF" \
    --munge-sock "$MUNGE_SOCK" --cluster "$CLUSTER" --caller $$
}

# Prints the pids of this cluster's processes matching KIND (regex) and NODE ("" = any node).
pids_of() {
  local kind_re="$1" node="${2:-}"
  list_procs | awk -v k="^($kind_re)\$" -v n="$node" '$2 ~ k && (n == "" || $3 == n) { print $1 }'
}

# Sends a signal to each given pid, ignoring those already gone.
signal_pids() {
  local sig="$1" pid
  shift
  for pid in "$@"; do kill "-$sig" "$pid" 2>/dev/null || true; done
}

# Waits up to $1 seconds until none of the given pids is alive (zombies count as gone).
wait_pids_gone() {
  local limit="$1" deadline pid alive
  shift
  deadline=$((SECONDS + limit))
  while :; do
    alive=0
    for pid in "$@"; do
      if proc_alive "$pid"; then alive=1; break; fi
    done
    [ "$alive" = 0 ] && return 0
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# --- ports ---------------------------------------------------------------------------------

# Prints every local TCP port in use (any state), one per line.
used_ports() { ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -un; }

# Picks $1 consecutive free TCP ports in 10000-19999 and prints the first one: below the ephemeral
# range, and below the shipped templates' MASTER_PORT (20000 + job id % 10000), which the jobs of
# every local cluster on this machine bind on its one address.
pick_port_block() {
  local count="$1" base p ok tries used
  used=" $(used_ports | tr '\n' ' ') "
  for ((tries = 0; tries < 200; tries++)); do
    base=$((10000 + (RANDOM * 32768 + RANDOM) % (10000 - count)))
    ok=1
    for ((p = base; p < base + count; p++)); do
      [[ "$used" == *" $p "* ]] && { ok=0; break; }
    done
    [ "$ok" = 1 ] && { echo "$base"; return 0; }
  done
  return 1
}

# Prints the ports of this cluster that some process still listens on.
listening_ports() {
  local p
  local -a ours=()
  for ((p = SLURMD_PORT; p < SLURMD_PORT + NODES; p++)); do ours+=("$p"); done
  ours+=("$CTLD_PORT")
  [ "${ACCOUNTING:-0}" = 0 ] || ours+=("$DB_PORT" "$DBD_PORT")
  ss -Htln 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -un |
    grep -Fx -f <(printf '%s\n' "${ours[@]}") || true
}

# --- configuration -------------------------------------------------------------------------

# Writes DIR/cluster.info, DIR/slurm.conf and DIR/env for a new cluster.
write_config() {
  cat >"$INFO" <<EOF
# Facts about the cluster in this directory, written by cluster.sh start.
CLUSTER=$CLUSTER
PREFIX=$PREFIX
NODES=$NODES
CTLD_PORT=$CTLD_PORT
SLURMD_PORT=$SLURMD_PORT
ACCOUNTING=$ACCOUNTING
DB_PORT=${DB_PORT:-0}
DBD_PORT=${DBD_PORT:-0}
EOF
  local plug="" accounting="AccountingStorageType=accounting_storage/none"
  [ -z "$PLUGSTACK" ] || plug="PlugStackConfig=$PLUGSTACK"
  if [ "$ACCOUNTING" = 1 ]; then
    accounting="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$MUNGE_SOCK
AccountingStoreFlags=job_comment"
    write_dbd_config
  fi
  cat >"$CONF" <<EOF
# Local test cluster, written by cluster.sh. Everything lives under $DIR.
ClusterName=$CLUSTER
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
# Job ids start in a block of 100 of this cluster's own (from its port), so that the jobs of two
# clusters on this machine do not share the templates' MASTER_PORT (20000 + job id % 10000).
FirstJobId=$(( CTLD_PORT % 100 * 100 + 1 ))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
$accounting
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=$SLURMD_TIMEOUT
MessageTimeout=5
MinJobAge=$MIN_JOB_AGE
$plug
NodeName=${PREFIX}[1-$NODES] NodeHostname=localhost NodeAddr=$(node_addrs) Port=[$SLURMD_PORT-$((SLURMD_PORT + NODES - 1))] CPUs=2 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=${PREFIX}[1-$NODES] Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$DIR/env" <<EOF
# Source this file to use the cluster in $DIR.
export SLURM_CONF=$CONF
export MLSUP_FAULT_DIR=$DIR
EOF
  chmod 0644 "$INFO" "$CONF" "$DIR/env"
}

# Writes DIR/slurmdbd.conf (slurmdbd reads it beside slurm.conf; it must be 0600 and SlurmUser's).
write_dbd_config() {
  cat >"$DBD_CONF" <<EOF
# Accounting daemon of the local test cluster, written by cluster.sh; its MariaDB lives in $DB_DIR.
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=root
StorageLoc=acct_$CLUSTER
PidFile=$DIR/run/slurmdbd.pid
LogFile=$DIR/log/slurmdbd.log
DebugLevel=info
EOF
  chmod 0600 "$DBD_CONF"
}

# Creates the directory tree of the cluster with permissions that let any user run jobs and
# read the logs; a previous cluster's state and spool are removed, its logs kept.
make_dirs() {
  local node f p
  mkdir -p "$DIR"
  chmod 0755 "$DIR"
  rm -rf "$DIR/state" "$DIR/spool" "$DIR/run" "$MUNGE_DIR" "$DB_DIR" "$DBD_CONF"
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/run" "$DIR/log" "$DIR/sticky-bad" "$MUNGE_DIR"
  chmod 0755 "$DIR/state" "$DIR/spool" "$DIR/run" "$DIR/log" "$DIR/sticky-bad"
  # Slurm creates missing log files with mode 0600; existing ones keep their mode.
  touch "$DIR/log/slurmctld.log"
  chmod 0644 "$DIR/log/slurmctld.log"
  while read -r node; do
    mkdir -p "$DIR/spool/$node"
    chmod 0755 "$DIR/spool/$node"
    f="$DIR/log/slurmd-$node.log"
    touch "$f"
    chmod 0644 "$f"
  done < <(node_names)
  # munged insists on owning its directory and refuses group/world-writable ones.
  chown munge:munge "$MUNGE_DIR"
  chmod 0755 "$MUNGE_DIR"
  p="$DIR"
  while [ "$p" != / ]; do
    p="$(dirname "$p")"
    runuser -u nobody -- test -x "$p" 2>/dev/null ||
      log "warning: $p is not traversable by other users; jobs of non-root users will fail"
  done
}

# --- daemons -------------------------------------------------------------------------------

# Runs a command with the clean environment that every daemon of this cluster gets. The
# MLSUP_CLUSTER_DIR marker lets list_procs find the daemons' helper processes; MLSUP_NODE (set by
# start_slurmd) goes last because slurmstepd, which inherits slurmd's environment, wipes the
# front of its environment block with its process title, and the last variables survive.
daemon_env() {
  env -i PATH="$DAEMON_PATH" LANG=C SLURM_CONF="$CONF" MLSUP_CLUSTER_DIR="$DIR" "$@"
}

# Creates a fresh munge key and starts the cluster's own munged as user munge.
start_munged() {
  local key="$MUNGE_DIR/munge.key"
  head -c 1024 /dev/urandom >"$key"
  chown munge:munge "$key"
  chmod 0400 "$key"
  daemon_env runuser -u munge -- munged --force --socket="$MUNGE_SOCK" --key-file="$key" \
    --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" \
    --seed-file="$MUNGE_DIR/munged.seed" 9>&- ||
    fail_start "munged did not start" "$MUNGE_DIR/munged.log"
  local deadline=$((SECONDS + 10))
  until [ -S "$MUNGE_SOCK" ] && munge -S "$MUNGE_SOCK" -n </dev/null >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail_start "munged does not answer on $MUNGE_SOCK" "$MUNGE_DIR/munged.log"
    sleep 0.1
  done
}

# MariaDB's options: small files and no flushing, since a test cluster's accounting is thrown away.
DB_OPTS=(--no-defaults --innodb-log-file-size=8M --innodb-buffer-pool-size=32M
  --innodb-data-file-path=ibdata1:8M:autoextend --innodb-flush-log-at-trx-commit=0 --skip-name-resolve)

# Creates a MariaDB data directory in DIR/db and starts mariadbd on it (private port and socket,
# loopback only, as user mysql); root may connect from 127.0.0.1 without a password.
start_mariadb() {
  mkdir -p "$DB_DIR/data"
  chown -R mysql:mysql "$DB_DIR"
  mariadb-install-db --user=mysql --datadir="$DB_DIR/data" --auth-root-authentication-method=normal \
    --skip-test-db "${DB_OPTS[@]}" >"$DIR/log/mariadb-install.log" 2>&1 9>&- ||
    fail_start "mariadb-install-db failed" "$DIR/log/mariadb-install.log"
  # In a subshell that exits at once, so mariadbd is no child of this script (list_procs skips those).
  (daemon_env mariadbd "${DB_OPTS[@]}" --user=mysql --datadir="$DB_DIR/data" --socket="$DB_SOCK" \
    --port="$DB_PORT" --bind-address=127.0.0.1 --pid-file="$DB_DIR/mysqld.pid" \
    --log-error="$DIR/log/mariadb.log" </dev/null >/dev/null 2>&1 9>&- &)
  local deadline=$((SECONDS + 30))
  until mariadb --no-defaults -S "$DB_SOCK" -u root -e 'select 1' >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail_start "mariadbd does not answer on $DB_SOCK" "$DIR/log/mariadb.log"
    sleep 0.1
  done
}

# Starts slurmdbd, waits until it answers, and registers the cluster, an account and the users
# (root and every ordinary user of the machine), so that accounting records every job.
start_slurmdbd() {
  daemon_env slurmdbd 9>&- || fail_start "slurmdbd did not start" "$DIR/log/slurmdbd.log"
  local deadline=$((SECONDS + 30))
  until SL_TIMEOUT=5 sl sacctmgr -n -P list cluster format=cluster >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail_start "slurmdbd does not answer on port $DBD_PORT" "$DIR/log/slurmdbd.log"
    sleep 0.2
  done
  sl sacctmgr -i add cluster "$CLUSTER" >/dev/null ||
    fail_start "sacctmgr could not add the cluster" "$DIR/log/slurmdbd.log"
  sl sacctmgr -i add account mlsup Cluster="$CLUSTER" Description=tests Organization=tests >/dev/null ||
    fail_start "sacctmgr could not add the account" "$DIR/log/slurmdbd.log"
  local -a users=(root)
  mapfile -t -O 1 users < <(getent passwd | awk -F: '$3 >= 1000 && $3 < 65534 { print $1 }')
  sl sacctmgr -i add user "$(IFS=,; echo "${users[*]}")" Account=mlsup Cluster="$CLUSTER" >/dev/null ||
    fail_start "sacctmgr could not add the users" "$DIR/log/slurmdbd.log"
}

# Starts slurmctld (recovering saved state) and waits until it answers.
start_slurmctld() {
  local limit="${1:-30}" deadline
  daemon_env slurmctld -f "$CONF" 9>&- ||
    fail_start "slurmctld did not start" "$DIR/log/slurmctld.log"
  deadline=$((SECONDS + limit))
  until SL_TIMEOUT=5 sl scontrol ping 2>/dev/null | grep 'is UP' >/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail_start "slurmctld does not answer within ${limit}s" "$DIR/log/slurmctld.log"
    sleep 0.2
  done
}

# Waits up to $1 seconds until no node is in state UNKNOWN any more (a restarted slurmctld
# knows a node's state only once its slurmd registers again); only warns on timeout, since a
# crashed or frozen node never registers.
wait_nodes_known() {
  local limit="$1" deadline states
  deadline=$((SECONDS + limit))
  while states="$(node_states || true)" && grep -q ' unknown' <<<"$states"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "warning: still unknown after ${limit}s: $(awk '$2 ~ /unknown/ { print $1 }' <<<"$states" | tr '\n' ' ')"
      return 0
    fi
    sleep 0.2
  done
}

# Starts the slurmd of node $1.
start_slurmd() {
  daemon_env MLSUP_NODE="$1" slurmd -f "$CONF" -N "$1" 9>&- ||
    fail_start "slurmd of $1 did not start" "$DIR/log/slurmd-$1.log"
}

# Prints "NODE STATE" for every node of the cluster (long state names, lower case).
node_states() { sl sinfo -h -N -o '%N %T' 2>/dev/null | sort -u; }

# Waits up to $1 seconds until every node is idle; returns 1 on timeout.
wait_all_idle() {
  local limit="$1" deadline states
  deadline=$((SECONDS + limit))
  while :; do
    states="$(node_states || true)"
    if [ -n "$states" ] && [ "$(awk '$2 == "idle"' <<<"$states" | wc -l)" -eq "$NODES" ]; then
      return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || { log "node states: $(tr '\n' ' ' <<<"$states")"; return 1; }
    sleep 0.2
  done
}

# Prints the last lines of each given log file to stderr.
tail_logs() {
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    echo "----- last lines of $f -----" >&2
    tail -n 15 "$f" >&2 || true
  done
}

# Reports a failed start with log tails, tears down what was started, and exits 1.
fail_start() {
  local msg="$1"
  shift
  log "error: $msg"
  tail_logs "$@"
  if [ "${STARTING:-0}" = 1 ]; then
    log "stopping the partly started cluster in $DIR"
    STARTING=0
    kill_cluster || true
  fi
  exit 1
}

# Kills every process of the cluster (continuing frozen ones) and waits for its ports to close.
kill_cluster() {
  local round pids
  for ((round = 0; round < 50; round++)); do
    mapfile -t pids < <(pids_of 'slurmctld|slurmd|slurmstepd|helper|task')
    [ "${#pids[@]}" -gt 0 ] || break
    signal_pids KILL "${pids[@]}"
    signal_pids CONT "${pids[@]}"
    wait_pids_gone 5 "${pids[@]}" || true
  done
  mapfile -t pids < <(pids_of munged)
  if [ "${#pids[@]}" -gt 0 ]; then
    signal_pids TERM "${pids[@]}"
    wait_pids_gone 5 "${pids[@]}" || { signal_pids KILL "${pids[@]}"; wait_pids_gone 5 "${pids[@]}" || true; }
  fi
  mapfile -t pids < <(pids_of 'munged|slurmctld|slurmd|slurmstepd|helper|task')
  [ "${#pids[@]}" -eq 0 ] || { log "error: processes survived: ${pids[*]}"; return 1; }
  local deadline=$((SECONDS + 10)) ports
  while ports="$(listening_ports)" && [ -n "$ports" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { log "error: ports still listening: $(tr '\n' ' ' <<<"$ports")"; return 1; }
    sleep 0.1
  done
  rm -f "$DIR"/run/*.pid
}

# --- subcommands ---------------------------------------------------------------------------

# cluster.sh start: creates, configures and starts the cluster, then waits until all nodes are idle.
cmd_start() {
  local dir="" name="" idle_timeout=60
  NODES=4 SLURMD_TIMEOUT=10 MIN_JOB_AGE=300 PLUGSTACK="" ACCOUNTING=0 NODE_ADDRS=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) dir="${2:?}"; shift 2 ;;
      --nodes) NODES="${2:?}"; shift 2 ;;
      --slurmd-timeout) SLURMD_TIMEOUT="${2:?}"; shift 2 ;;
      --min-job-age) MIN_JOB_AGE="${2:?}"; shift 2 ;;
      --plugstack) PLUGSTACK="$(abs_path "${2:?}")"; shift 2 ;;
      --name) name="${2:?}"; shift 2 ;;
      --idle-timeout) idle_timeout="${2:?}"; shift 2 ;;
      --accounting) ACCOUNTING=1; shift ;;
      --node-addrs) NODE_ADDRS=1; shift ;;
      -h | --help) usage 0 ;;
      *) log "unknown option: $1"; usage ;;
    esac
  done
  [ -n "$dir" ] || { log "start needs --dir DIR"; usage; }
  [[ "$NODES" =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive integer"
  [ "$NODE_ADDRS" = 0 ] || [ "$NODES" -le 244 ] || die "--node-addrs gives at most 244 nodes an address of their own"
  [[ "$SLURMD_TIMEOUT" =~ ^[0-9]+$ ]] || die "--slurmd-timeout must be an integer"
  [[ "$MIN_JOB_AGE" =~ ^[0-9]+$ ]] || die "--min-job-age must be an integer"
  [ -z "$PLUGSTACK" ] || [ -f "$PLUGSTACK" ] || die "plugstack file $PLUGSTACK does not exist"
  [ "$(id -u)" = 0 ] || die "start must run as root"
  set_paths "$dir"
  [ "$DIR" != / ] || die "refusing to use / as cluster directory"
  [[ "$DIR" =~ ^[A-Za-z0-9/._+-]+$ ]] || die "DIR may hold only letters, digits and / . _ + - (slurm.conf has no quoting)"

  CLUSTER="c$(short_hash "$DIR")"
  if [ -n "$name" ]; then
    [[ "$name" =~ ^[a-z][a-z0-9-]*$ ]] || die "--name must match [a-z][a-z0-9-]*"
    PREFIX="$name"
  else
    PREFIX="${CLUSTER}n"
  fi

  if [ -f "$INFO" ]; then
    (
      # shellcheck disable=SC1090
      source "$INFO"
      CLUSTER_OLD="$CLUSTER"
      [ -z "$(pids_of 'munged|slurmctld|slurmd|slurmstepd|helper|task')" ] ||
        die "a cluster ($CLUSTER_OLD) is already running in $DIR; run '$PROG stop --dir $DIR' first"
    )
  fi

  exec 9>>"$PORT_LOCK"
  flock -w 120 9 || die "could not lock $PORT_LOCK"
  local base
  base="$(pick_port_block $((NODES + 3)))" || die "no block of $((NODES + 3)) free ports found"
  CTLD_PORT="$base"
  SLURMD_PORT=$((base + 1))
  if [ "$ACCOUNTING" = 1 ]; then
    DB_PORT=$((base + NODES + 1))
    DBD_PORT=$((base + NODES + 2))
  fi

  make_dirs
  write_config
  log "starting cluster $CLUSTER in $DIR: nodes ${PREFIX}[1-$NODES], slurmctld port $CTLD_PORT, slurmd ports $SLURMD_PORT-$((SLURMD_PORT + NODES - 1))"
  STARTING=1
  start_munged
  if [ "$ACCOUNTING" = 1 ]; then
    start_mariadb
    start_slurmdbd
    log "accounting is up: MariaDB on port $DB_PORT, slurmdbd on port $DBD_PORT (${SECONDS}s)"
  fi
  start_slurmctld 30
  local node
  while read -r node; do start_slurmd "$node"; done < <(node_names)
  if ! wait_all_idle "$idle_timeout"; then
    local logs=("$DIR/log/slurmctld.log")
    while read -r node; do logs+=("$DIR/log/slurmd-$node.log"); done < <(node_names)
    fail_start "not every node became idle within ${idle_timeout}s" "${logs[@]}"
  fi
  STARTING=0
  exec 9>&-
  log "cluster $CLUSTER is up ($NODES nodes idle, ${SECONDS}s)"
  echo "SLURM_CONF=$CONF"
}

# Parses the "--dir DIR" arguments shared by the other subcommands; sets CLEAN too.
parse_dir_args() {
  local dir=""
  CLEAN=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) dir="${2:?}"; shift 2 ;;
      --clean) CLEAN=1; shift ;;
      -h | --help) usage 0 ;;
      *) log "unknown option: $1"; usage ;;
    esac
  done
  [ -n "$dir" ] || { log "--dir DIR is required"; usage; }
  set_paths "$dir"
}

# cluster.sh stop: kills every process of the cluster; with --clean also removes DIR.
cmd_stop() {
  parse_dir_args "$@"
  if [ ! -f "$INFO" ]; then
    log "no cluster in $DIR, nothing to stop"
    return 0
  fi
  load_info
  kill_cluster
  log "cluster $CLUSTER in $DIR stopped"
  if [ "$CLEAN" = 1 ]; then
    rm -rf "$DIR"
    log "removed $DIR"
  fi
}

# cluster.sh status: prints node states; exits 0 only if slurmctld answers.
cmd_status() {
  parse_dir_args "$@"
  load_info
  if ! SL_TIMEOUT=10 sl scontrol ping 2>/dev/null | grep 'is UP' >/dev/null; then
    log "slurmctld of $CLUSTER in $DIR does not answer"
    return 1
  fi
  sl sinfo -N -o '%N %T %E'
}

# Stops slurmctld gracefully (it saves its state), killing it if it does not exit in time.
stop_ctld() {
  local pids
  mapfile -t pids < <(pids_of slurmctld)
  if [ "${#pids[@]}" -eq 0 ]; then
    log "slurmctld of $CLUSTER is not running"
    return 0
  fi
  signal_pids CONT "${pids[@]}"
  signal_pids TERM "${pids[@]}"
  if ! wait_pids_gone 30 "${pids[@]}"; then
    log "slurmctld did not exit on SIGTERM, killing it"
    signal_pids KILL "${pids[@]}"
    wait_pids_gone 5 "${pids[@]}" || die "slurmctld ${pids[*]} does not die"
  fi
  local deadline=$((SECONDS + 10))
  while ss -Htln "sport = :$CTLD_PORT" | grep . >/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || die "port $CTLD_PORT still listening after slurmctld stopped"
    sleep 0.1
  done
  rm -f "$DIR/run/slurmctld.pid"
  log "slurmctld of $CLUSTER stopped"
}

# cluster.sh stop-ctld: stops only slurmctld; jobs and slurmd keep running.
cmd_stop_ctld() {
  parse_dir_args "$@"
  load_info
  stop_ctld
}

# cluster.sh start-ctld: starts slurmctld again from its saved state.
cmd_start_ctld() {
  parse_dir_args "$@"
  load_info
  if [ -n "$(pids_of slurmctld)" ]; then
    log "slurmctld of $CLUSTER is already running"
    return 0
  fi
  start_slurmctld 30
  wait_nodes_known 20
  log "slurmctld of $CLUSTER started"
}

# cluster.sh restart-ctld: stops and starts slurmctld; state and jobs survive.
cmd_restart_ctld() {
  parse_dir_args "$@"
  load_info
  stop_ctld
  start_slurmctld 30
  wait_nodes_known 20
  log "slurmctld of $CLUSTER restarted"
}

# cluster.sh reap: kills leftover processes of jobs that no longer hold an allocation. With
# proctrack/linuxproc Slurm finds a job's processes by ancestry only, so one whose parent died
# first (e.g. an srun after its batch shell was killed) is orphaned and outlives its job.
cmd_reap() {
  parse_dir_args "$@"
  load_info
  local jobs pid kind node job
  local -A live=()
  jobs="$(SL_TIMEOUT=15 sl squeue -h -t all -o '%i %T')" || die "slurmctld does not answer; nothing reaped"
  while read -r job kind; do
    case "$kind" in RUNNING | SUSPENDED | COMPLETING | CONFIGURING | SIGNALING | STAGE_OUT | RESIZING) live[$job]=1 ;; esac
  done <<<"$jobs"
  local -a victims=()
  while read -r pid kind node job; do
    [ "$job" != - ] && [ -z "${live[$job]:-}" ] && victims+=("$pid")
  done < <(list_procs | awk '$2 == "task" || $2 == "slurmstepd"')
  if [ "${#victims[@]}" -gt 0 ]; then
    signal_pids KILL "${victims[@]}"
    signal_pids CONT "${victims[@]}"
    wait_pids_gone 5 "${victims[@]}" || log "warning: some of ${victims[*]} did not die"
  fi
  log "reaped ${#victims[@]} leftover processes of ended jobs"
}

# Dispatches the subcommand.
main() {
  [ $# -gt 0 ] || usage
  local cmd="$1"
  shift
  case "$cmd" in
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status "$@" ;;
    stop-ctld) cmd_stop_ctld "$@" ;;
    start-ctld) cmd_start_ctld "$@" ;;
    restart-ctld) cmd_restart_ctld "$@" ;;
    reap) cmd_reap "$@" ;;
    -h | --help | help) usage 0 ;;
    *) log "unknown subcommand: $cmd"; usage ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi
