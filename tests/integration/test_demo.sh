#!/usr/bin/env bash
# The README's demo, in its short form (no install, no build), on the live test cluster.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
out=$(mktemp /tmp/mlsup-demo-test.XXXXXX)
MLSUP=${MLSUP:?} timeout 600 "$REPO/scripts/demo.sh" --short > "$out" 2>&1
rc=$?
tail -n 15 "$out"
check "the demo exits 0" [ "$rc" -eq 0 ]
check "mlsup run completed the campaign" grep -q "^mlsup run exited 0" "$out"
check "the trainer's result equals the expected chain" grep -q "^demo: completed" "$out"
rm -f "$out"
finish
