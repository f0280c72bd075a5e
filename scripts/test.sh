#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs packages, builds with warnings as
# errors, starts the local Slurm cluster, runs every unit and integration test (the demo included)
# through ctest, and stops the cluster again, also when a test fails. Beside the cluster's suites, the
# unit tests and the fuzz replays run again under ASan and UBSan (build-asan/, its own log); a failure
# there fails the run too.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

sanitized_log=$PWD/build-asan/sanitized.log

# Builds the unit tests and the fuzz replays with ASan and UBSan in build-asan/ (only those, at -O1:
# see MLSUP_SANITIZE) and runs them; any report (ASan, UBSan or a leak) ends the program with an error,
# which fails them.
sanitized_tests() {
  export UBSAN_OPTIONS=print_stacktrace=1
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLSUP_SANITIZE=ON >/dev/null &&
    cmake --build build-asan -j"$(nproc)" --target mlsup_unittest mlsup_fuzz &&
    ctest --test-dir build-asan --output-on-failure --timeout 1200 -R '^(unit|fuzz_replay_.*)$'
}

./scripts/install-deps.sh
./scripts/build.sh >/dev/null

cluster_dir=$(mktemp -d /tmp/mlsup-test-cluster.XXXXXX)
stop_cluster() { tests/cluster/cluster.sh stop --dir "$cluster_dir" >/dev/null 2>&1 || true; }
stop_sanitized() { [ -z "${sanitized_pid:-}" ] || kill -- -"$sanitized_pid" 2>/dev/null || true; }
trap 'stop_sanitized; stop_cluster' EXIT
if ! conf_line=$(tests/cluster/cluster.sh start --dir "$cluster_dir" --nodes 4 --slurmd-timeout 10); then
  echo "test.sh: the local Slurm cluster did not come up; its logs are in $cluster_dir" >&2
  exit 1
fi
export "${conf_line?}"
echo "test.sh: cluster up ($conf_line) after $(( $(date +%s) - started ))s"

# The sanitized tests at the lowest priority (they take only what the cluster's suites leave idle, so
# that no suite's timing suffers), in a process group of their own (stopped with the run).
mkdir -p build-asan
set -m
nice -n 19 bash -c "$(declare -f sanitized_tests); sanitized_tests" >"$sanitized_log" 2>&1 &
sanitized_pid=$!
set +m

set +e
ctest --test-dir build --output-on-failure --timeout 1200 "$@"
rc=$?
echo "test.sh: cluster suites done after $(( $(date +%s) - started ))s; waiting for the sanitized tests"
wait "$sanitized_pid"
sanitized_rc=$?
sanitized_pid=""
set -e
if [ $sanitized_rc -ne 0 ]; then
  tail -n 80 "$sanitized_log" >&2
  echo "test.sh: FAILED: the unit tests or fuzz replays under ASan/UBSan (exit $sanitized_rc); log: $sanitized_log" >&2
  [ $rc -ne 0 ] || rc=1
else
  echo "test.sh: the unit tests and fuzz replays pass under ASan/UBSan ($(grep -c 'Test *#' "$sanitized_log") tests; log: $sanitized_log)"
fi
echo "test.sh: finished in $(( $(date +%s) - started ))s"
exit $rc
