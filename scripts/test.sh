#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs packages, builds with warnings as
# errors, starts the local Slurm cluster, runs every unit and integration test (the demo included)
# through ctest, and stops the cluster again, also when a test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

./scripts/install-deps.sh
./scripts/build.sh >/dev/null

cluster_dir=$(mktemp -d /tmp/mlsup-test-cluster.XXXXXX)
stop_cluster() { tests/cluster/cluster.sh stop --dir "$cluster_dir" >/dev/null 2>&1 || true; }
trap stop_cluster EXIT
if ! conf_line=$(tests/cluster/cluster.sh start --dir "$cluster_dir" --nodes 4 --slurmd-timeout 10); then
  echo "test.sh: the local Slurm cluster did not come up; its logs are in $cluster_dir" >&2
  exit 1
fi
export "${conf_line?}"
echo "test.sh: cluster up ($conf_line) after $(( $(date +%s) - started ))s"

set +e
ctest --test-dir build --output-on-failure --timeout 1200 "$@"
rc=$?
set -e
echo "test.sh: finished in $(( $(date +%s) - started ))s"
exit $rc
