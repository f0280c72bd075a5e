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

# Waits until a command succeeds: wait_until SECONDS command args...
wait_until() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# The base state of a job as Slurm shows it (PENDING, RUNNING, COMPLETED, ...).
job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }

# The count of an RPC type in sdiag (0 when absent).
rpc_count() { sdiag | awk -v t="$1" '$1 == t { sub("count:", "", $4); print $4; found=1 } END { if (!found) print 0 }'; }

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
