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

# Builds the unit tests, the fuzz replays and mlsup itself with ASan and UBSan in build-asan/ (at -O1:
# see MLSUP_SANITIZE) and runs the first two; any report (ASan, UBSan or a leak) ends the program with
# an error, which fails them. The sanitized mlsup runs a live scenario once the cluster suites are done.
sanitized_tests() {
  export UBSAN_OPTIONS=print_stacktrace=1
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLSUP_SANITIZE=ON >/dev/null &&
    cmake --build build-asan -j"$(nproc)" --target mlsup_unittest mlsup_fuzz mlsup &&
    ctest --test-dir build-asan --output-on-failure --timeout 1200 -R '^(unit|fuzz_replay_.*)$'
}

./scripts/install-deps.sh --tests
./scripts/build.sh >/dev/null

# Three clusters, three lanes: the cluster suites mostly wait on Slurm and on sleeps, so ctest runs
# three at a time, each alone on one of these clusters (tests/cluster/on_cluster.sh hands it its
# SLURM_CONF); the suites that keep the cores busy take 3 of 4 "cpu" slots, so no two of them run
# together (tests/CMakeLists.txt).
lanes=3
cluster_dirs=()
stop_clusters() {
  local dir
  for dir in "${cluster_dirs[@]}"; do tests/cluster/cluster.sh stop --dir "$dir" >/dev/null 2>&1 || true; done
}
stop_sanitized() { [ -z "${sanitized_pid:-}" ] || kill -- -"$sanitized_pid" 2>/dev/null || true; }
trap 'stop_sanitized; stop_clusters' EXIT
spec=$PWD/build/clusters.json
ids=()
for ((lane = 0; lane < lanes; lane++)); do
  dir=$(mktemp -d /tmp/mlsup-test-cluster.XXXXXX)
  cluster_dirs+=("$dir")
  if ! conf_line=$(tests/cluster/cluster.sh start --dir "$dir" --nodes 4 --slurmd-timeout 10); then
    echo "test.sh: local Slurm cluster c$lane did not come up; its logs are in $dir" >&2
    exit 1
  fi
  export "MLSUP_CLUSTER_CONF_c$lane=${conf_line#SLURM_CONF=}"
  ids+=("{\"id\": \"c$lane\", \"slots\": 1}")
  echo "test.sh: cluster c$lane up ($conf_line) after $(( $(date +%s) - started ))s"
done
export "${conf_line?}"  # for a test run without the resource spec
(IFS=,; echo "{\"version\": {\"major\": 1, \"minor\": 0}, \"local\": [{\"cluster\": [${ids[*]}], \"cpu\": [{\"id\": \"0\", \"slots\": 4}]}]}") >"$spec"

# The sanitized tests at the lowest priority (they take only what the cluster's suites leave idle, so
# that no suite's timing suffers), in a process group of their own (stopped with the run).
mkdir -p build-asan
set -m
nice -n 19 bash -c "$(declare -f sanitized_tests); sanitized_tests" >"$sanitized_log" 2>&1 &
sanitized_pid=$!
set +m

set +e
ctest --test-dir build --output-on-failure --timeout 1200 -j"$lanes" --resource-spec-file "$spec" "$@"
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
  # A live scenario under ASan and UBSan: slurmctld frozen and restarted under a running campaign.
  live_started=$(date +%s)
  if SLURM_CONF=$MLSUP_CLUSTER_CONF_c0 MLSUP=$PWD/build-asan/mlsup ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      MLSUP_SOURCE_DIR=$PWD timeout -s KILL 600 bash tests/integration/test_controller_faults.sh outage-libslurm \
      >"$PWD/build-asan/live.log" 2>&1; then
    echo "test.sh: the controller-outage scenario passes with mlsup under ASan/UBSan ($(( $(date +%s) - live_started ))s)"
  else
    tail -n 60 "$PWD/build-asan/live.log" >&2
    echo "test.sh: FAILED: the controller-outage scenario with mlsup under ASan/UBSan; log: $PWD/build-asan/live.log" >&2
    [ $rc -ne 0 ] || rc=1
  fi
fi
if [ $rc -ne 0 ] && [ -f build/Testing/Temporary/LastTest.log ]; then
  # The failures once more at the very end, where a truncated log still shows them.
  echo "test.sh: the failed checks:"
  grep -E '^(FAILED: |TEST CASE: )|: ERROR: |Test Failed|Timeout|timed out' build/Testing/Temporary/LastTest.log | tail -n 60
fi
if [ "${sanitized_rc:-0}" -ne 0 ]; then
  echo "test.sh: the failed checks under ASan/UBSan:"
  grep -E ': ERROR: |^  values: |runtime error: |^==[0-9]+==ERROR|\*\*\*(Failed|Timeout|Exception)' "$sanitized_log" | tail -n 30
fi
echo "test.sh: finished in $(( $(date +%s) - started ))s"
exit $rc
