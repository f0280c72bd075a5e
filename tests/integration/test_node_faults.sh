#!/usr/bin/env bash
# Node faults end to end: a node that loses power (frozen) on a cluster where Slurm needs 5 minutes
# to notice (SlurmdTimeout=300). The hang is found from the heartbeat, the silent node is found by
# probing, the replacement runs without it while Slurm still calls it up, and when the node thaws
# its abandoned rank writes no checkpoint.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

slow=$(mktemp -d /tmp/mlsup-c300.XXXXXX)
trap '"$REPO/tests/cluster/cluster.sh" stop --dir "$slow" --clean >/dev/null 2>&1' EXIT
conf_line=$("$REPO/tests/cluster/cluster.sh" start --dir "$slow" --nodes 4 --slurmd-timeout 300) || {
  echo "FAILED: the SlurmdTimeout=300 cluster did not start"; echo "0 passed, 1 failed"; exit 1; }
export "$conf_line"

# The journal's job id of attempt N.
job_of_attempt() { grep '"type":"submitted"' "$STATE/journal.jsonl" 2>/dev/null | grep "\"attempt\":$1," | grep -o '"job_id":[0-9]*' | cut -d: -f2; }
# True once attempt 2's job runs.
replacement_running() { local j; j=$(job_of_attempt 2); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }
# The nodes of a job, one per line.
nodes_of() { scontrol show hostnames "$(scontrol -o show job "$1" | grep -o ' NodeList=[^ ]*' | cut -d= -f2)"; }

# Runs a 2-node campaign, injects FAULT (freeze|crash) into the node PICK (head|tail) of its job once
# training runs, and waits for the replacement to run. Sets JOB, NODE, FAULT_AT and TOOK (seconds).
fault_and_replace() {
  STEADY_TIMEOUT=5s new_campaign "$1" "--steps 300 --step-seconds 0.1 --ckpt-every 10"
  sed -i 's/^  nodes: 1$/  nodes: 2/' "$CONF"
  start_campaign
  wait_until 90 heartbeat_at_least 30
  JOB=$(job_of_attempt 1)
  NODE=$(nodes_of "$JOB" | "$3" -1)
  FAULT_AT=$(date +%s.%N)
  "$REPO/tests/cluster/fault.sh" --dir "$slow" "$2" "$NODE" >/dev/null 2>&1
  wait_until 120 replacement_running
  TOOK=$(python3 -c "import time,sys; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$FAULT_AT")
}

# True when attempt 2's job does not run on NODE.
replacement_avoids_node() { ! nodes_of "$(job_of_attempt 2)" | grep -qx "$NODE"; }

# The checks both faults share: quick replacement, exactly NODE in the ledger, not in the replacement.
check_replaced() {
  check "$1: the replacement runs within steady timeout + probe + 15 s" python3 -c "import sys; sys.exit(float(sys.argv[1]) > 30)" "$TOOK"
  check "$1: the ledger holds exactly the failed node" \
    [ "$(grep '"type":"exclude"' "$STATE/journal.jsonl" | grep -o '"node":"[^"]*"' | sort -u)" = "\"node\":\"$NODE\"" ]
  check "$1: the replacement does not use it" replacement_avoids_node
}

scenario "power loss (node frozen), SlurmdTimeout=300 -> excluded and replaced while Slurm still calls the node up"
fault_and_replace powerloss freeze head  # rank 0's node: the one that writes checkpoints
echo "froze $NODE of job $JOB; replacement $(job_of_attempt 2) RUNNING after ${TOOK}s (steady timeout 5s, probe 10s)"
state=$(sinfo -h -N -n "$NODE" -o '%T' | head -1)
check_replaced "power loss"
check "power loss: Slurm still calls the frozen node up ($state)" sh -c "echo '$state' | grep -qvE 'down|\\*'"
"$REPO/tests/cluster/fault.sh" --dir "$slow" revive "$NODE" --timeout 30 >/dev/null 2>&1
wait_campaign 300
check "power loss: campaign completed" [ "$RC" -eq 0 ]
check "power loss: result equals a failure-free run's" result_is_exact
check "power loss: the thawed rank of the abandoned attempt wrote no checkpoint after the freeze" python3 - "$STATE/checkpoints" "$FAULT_AT" <<'PY'
import json, os, sys
root, frozen_at = sys.argv[1], float(sys.argv[2])
late = [d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "state.json"))
        and json.load(open(os.path.join(root, d, "state.json")))["attempt_written"] == 1
        and os.path.getmtime(os.path.join(root, d, "state.json")) > frozen_at + 1]
print("checkpoints of attempt 1 written after the freeze:", late)
sys.exit(1 if late else 0)
PY
scenario_done

scenario "node crash (slurmd and processes killed), SlurmdTimeout=300 -> excluded and replaced without waiting for COMPLETING"
fault_and_replace nodecrash crash tail
echo "crashed $NODE of job $JOB; replacement $(job_of_attempt 2) RUNNING after ${TOOK}s; the old job is $(job_state "$JOB")"
check_replaced "crash"
wait_campaign 300
check "crash: campaign completed" [ "$RC" -eq 0 ]
check "crash: result equals a failure-free run's" result_is_exact
"$REPO/tests/cluster/fault.sh" --dir "$slow" revive "$NODE" --timeout 30 >/dev/null 2>&1
scenario_done

finish
