#!/usr/bin/env bash
# The demo: builds mlsup, starts a private 4-node Slurm cluster on loopback, validates and renders
# the demo campaign (examples/demo/campaign.yaml), supervises it with `mlsup run` through an
# injected crash, and checks the trainer's result against the expected hash chain.
#   scripts/demo.sh [--short]     --short: no install or build (the tests use it), same campaign
# Uses the cluster named by SLURM_CONF when one is set.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
short=0
[ "${1:-}" = "--short" ] && short=1
started=$(date +%s)
say() { printf '\n== %s\n' "$*"; }

if [ $short -eq 0 ]; then
  ./scripts/install-deps.sh
  echo "building mlsup alone (the first build takes about 8 minutes on 2 cores; the tests build more)"
  mlsup=$(./scripts/build.sh mlsup)
else
  mlsup=${MLSUP:-$repo/build/mlsup}
fi

cluster_dir=""
cleanup() { [ -z "$cluster_dir" ] || tests/cluster/cluster.sh stop --dir "$cluster_dir" --clean >/dev/null 2>&1 || true; }
trap cleanup EXIT
if [ -z "${SLURM_CONF:-}" ]; then
  say "starting a local Slurm cluster (4 nodes)"
  cluster_dir=$(mktemp -d /tmp/mlsup-demo-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$cluster_dir" --nodes 4)"
fi
sinfo

campaign=examples/demo/campaign.yaml
state=examples/demo/.mlsup/demo
rm -rf "$state"

say "mlsup validate $campaign"
"$mlsup" validate "$campaign"

say "mlsup render $campaign   (attempt 1: the script and the sbatch command mlsup submits)"
"$mlsup" render "$campaign"

say "mlsup run $campaign   (the first attempt crashes at step 50; mlsup recovers)"
set +e
timeout -s KILL 600 "$mlsup" run "$campaign"
rc=$?
set -e
echo "mlsup run exited $rc"

say "mlsup status $campaign"
"$mlsup" status "$campaign"

say "mlsup events $campaign"
"$mlsup" events "$campaign"

say "checking the trainer's result"
result="$state/result.json"
[ -f "$result" ] || { echo "demo: no result at $result" >&2; exit 1; }
nonce=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nonce"])' "$result")
steps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' "$result")
chain=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain"])' "$result")
expected=$(python3 examples/trainer/train.py --expected-result --nonce "$nonce" --steps "$steps")
echo "result chain   $chain"
echo "expected chain $expected"
ls "$state/checkpoints"
attempts=$(grep -c '"type":"submitted"' "$state/journal.jsonl")
echo "attempts: $attempts"
[ "$rc" -eq 0 ] && [ "$attempts" -eq 2 ] && [ "$chain" = "$expected" ] || { echo "demo: FAILED" >&2; exit 1; }
echo
echo "demo: completed in $(( $(date +%s) - started ))s: one injected crash, recovered from the newest"
echo "complete checkpoint, and the result equals an uninterrupted run's."
