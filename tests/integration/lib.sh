# Shared helpers for the integration suites (sourced). Each suite counts its checks and ends with
# "N passed, M failed"; a missing cluster is a failure, never a skip.

PASSED=0
FAILED=0
SUITE_STARTED=$(date +%s)
REPO=${MLSUP_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# What the benchmarks share: the PATH the jobs inherit (Debian's python3 first), settling nodes.
source "$REPO/benchmarks/lib.sh"

# Records one check: check "what" command args...
check() {
  local what=$1; shift
  if "$@"; then
    PASSED=$((PASSED + 1)); echo "ok: $what"
  else
    FAILED=$((FAILED + 1)); echo "FAILED: $what"
  fi
}

# Prints the summary line and exits non-zero when a check failed.
finish() {
  echo "wall time: $(( $(date +%s) - SUITE_STARTED ))s"
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

# Fails the suite at once unless a live cluster is configured and answering.
require_cluster() {
  if [ -z "${SLURM_CONF:-}" ] || ! timeout 20 sinfo >/dev/null 2>&1; then
    echo "FAILED: no live Slurm cluster (SLURM_CONF=${SLURM_CONF:-unset}); start one with tests/cluster/cluster.sh"
    echo "0 passed, 1 failed"
    exit 1
  fi
  CLUSTER_DIR=$(dirname "$SLURM_CONF")
}

# Records one check made by a command run in a child bash under a hard limit, killed past it with
# everything it started: check_within SECONDS "what" command args... The command (a function of the
# suite's or of these libraries, or a program) runs under `set -euo pipefail`, so any of its commands
# that fails fails the check (and is named; fail_check says why in words); it sees the suite's
# functions and exported variables, nothing else of the suite's shell. Prints its wall time; returns
# non-zero when it failed.
check_within() {
  local limit=$1 what=$2 t0 rc=0 body; shift 2
  # shellcheck disable=SC2016  # expanded by the child
  body='set -euo pipefail
trap '\''rc=$?; [ "$rc" -eq 0 ] || [[ "$BASH_COMMAND" == exit* ]] || echo "  failed: $BASH_COMMAND (exit $rc)"'\'' EXIT
"$@"'
  t0=$(date +%s.%N)
  timeout -k 5 "$limit" bash -c "$(declare -f)"$'\n'"$body" check_within "$@" || rc=$?
  case $rc in 124 | 137) echo "  killed at its limit of ${limit}s" ;; esac
  echo "  $(seconds_since "$t0")s"
  check "$what" [ "$rc" -eq 0 ]
  [ "$rc" -eq 0 ]
}

# Ends the command of a check_within as failed, saying why: ... || fail_check "why".
fail_check() { echo "  why: $*"; exit 1; }

# Fails the suite at once, saying why (after the checks made so far): abort_suite "why".
abort_suite() {
  echo "FAILED: $*"
  FAILED=$((FAILED + 1))
  finish
  exit 1
}

# Waits until a command succeeds: wait_until SECONDS command args...
wait_until() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# Seconds from epoch time $1 to now (one decimal); from $1 to $2 with seconds_between.
seconds_between() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }
seconds_since() { seconds_between "$1" "$(date +%s.%N)"; }
# True when $1 seconds are at most $2.
within_s() { python3 -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$1" "$2"; }

# The base state of a job as Slurm shows it (PENDING, RUNNING, COMPLETED, ...).
job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
# True once job J is in a final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...): job_ended J.
job_ended() {
  case "$(job_state "$1")" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED) return 0 ;;
  esac
  return 1
}
# The nodes of job J, one per line: nodes_of J.
nodes_of() { scontrol show hostnames "$(scontrol -o show job "$1" | grep -o ' NodeList=[^ ]*' | cut -d= -f2)"; }

# Lays out what another user's jobs read under DIR (folders 0755) as an admin installs it, so that the
# suites that run jobs as an ordinary user pass from a checkout others cannot read (a 0700 home):
# DIR/lib/slurm/mlsup_spank.so, DIR/bin/mlsup, DIR/share/mlsup/templates/, DIR/share/mlsup/trainer/.
# install_for_users DIR BUILD
install_for_users() {
  local dir=$1 build=$2
  install -d -m 0755 "$dir" "$dir/bin" "$dir/lib" "$dir/lib/slurm" "$dir/share" "$dir/share/mlsup" \
    "$dir/share/mlsup/templates" "$dir/share/mlsup/trainer" &&
    install -m 0755 "$build/plugins/mlsup_spank.so" "$dir/lib/slurm/" &&
    install -m 0755 "$build/mlsup" "$dir/bin/" &&
    install -m 0644 "$REPO"/templates/*.tmpl "$dir/share/mlsup/templates/" &&
    install -m 0755 "$REPO/examples/trainer/train.py" "$dir/share/mlsup/trainer/"
}
