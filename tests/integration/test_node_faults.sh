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

# True once attempt 2's job runs.
replacement_running() { local j; j=$(job_of_attempt 2); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }

# Runs a 2-node campaign, injects FAULT (freeze|crash) into the node PICK (head|tail) of its job once
# training runs, and waits for the replacement to run. Sets JOB, NODE, FAULT_AT, FAULT_DONE and TOOK (seconds).
fault_and_replace() {
  STEADY_TIMEOUT=5s SAVE_TIMEOUT=8s new_campaign "$1" "--steps 300 --step-seconds 0.1 --ckpt-every 10"
  sed -i 's/^  nodes: 1$/  nodes: 2/' "$CONF"
  start_campaign
  wait_until 90 heartbeat_at_least 30
  JOB=$(job_of_attempt 1)
  NODE=$(nodes_of "$JOB" | "$3" -1)
  FAULT_AT=$(date +%s.%N)
  "$REPO/tests/cluster/fault.sh" --dir "$slow" "$2" "$NODE" >/dev/null 2>&1
  FAULT_DONE=$(date +%s.%N)  # the fault holds from here on (on a loaded machine, seconds after FAULT_AT)
  wait_until 120 replacement_running
  TOOK=$(seconds_since "$FAULT_DONE")
}

# True when attempt 2's job does not run on NODE.
replacement_avoids_node() { ! nodes_of "$(job_of_attempt 2)" | grep -x "$NODE" >/dev/null; }

# The checks both faults share: quick replacement, exactly NODE in the ledger, not in the replacement.
check_replaced() {
  check "$1: the replacement runs within steady timeout + probe + 20 s of the fault (${TOOK} s)" within_s "$TOOK" 30
  check "$1: the ledger holds exactly the failed node" \
    [ "$(excluded_nodes)" = "$NODE" ]
  check "$1: the replacement does not use it" replacement_avoids_node
}

scenario "power loss (node frozen), SlurmdTimeout=300 -> excluded and replaced while Slurm still calls the node up"
fault_and_replace powerloss freeze head  # rank 0's node: the one that writes checkpoints
echo "froze $NODE of job $JOB; replacement $(job_of_attempt 2) RUNNING after ${TOOK}s (steady timeout 5s, probe timeout 5s)"
state=$(sinfo -h -N -n "$NODE" -o '%T' | head -1)
check_replaced "power loss"
check "power loss: Slurm has not marked the frozen node down yet ($state)" sh -c "echo '$state' | grep -qvE 'down|drain'"
"$REPO/tests/cluster/fault.sh" --dir "$slow" revive "$NODE" --timeout 30 >/dev/null 2>&1
wait_campaign 300
check "power loss: campaign completed" [ "$RC" -eq 0 ]
check "power loss: result equals a failure-free run's" result_is_exact
check "power loss: the thawed rank of the abandoned attempt wrote no checkpoint after the freeze" python3 - "$STATE/checkpoints" "$FAULT_DONE" <<'PY'
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

# The partition's nodes in order (Slurm fills the lowest first), one per line.
all_nodes() { sinfo -h -N -o '%N' | sort -uV; }
# True when every node but $1 (if given) is idle.
all_idle() { ! sinfo -h -N -o '%N %T' | grep -v -e '^[^ ]* idle$' ${1:+-e "^$1 "} >/dev/null; }
# Injects a fault into the slow cluster; says what fault.sh said when it fails.
fault() {
  local said rc=0
  said=$("$REPO/tests/cluster/fault.sh" --dir "$slow" "$@" 2>&1) || rc=$?
  [ "$rc" -eq 0 ] || echo "fault $* failed (exit $rc): $said"
  return "$rc"
}
export MLSUP_FAULT_DIR=$slow  # the trainer crashes on nodes marked sticky-bad there
job_running() { [ "$(job_state "$1")" = RUNNING ]; }
job_avoids() { ! nodes_of "$1" | grep -x "$2" >/dev/null; }
# True when Slurm's ExcNodeList of job $1 holds node $2.
job_excludes() {
  [ -n "$1" ] || return 1
  local exc; exc=$(scontrol -o show job "$1" | grep -o 'ExcNodeList=[^ ]*' | cut -d= -f2)
  [ "$exc" != "(null)" ] && scontrol show hostnames "$exc" | grep -x "$2" >/dev/null
}
in_range() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
# A 3-node campaign (of 4 nodes) whose trainer crashes on the lowest node, where Slurm puts it first.
# A job pending for missing nodes gets an exclusion relaxed after 8 s: the relax scenarios repair the
# sticky node within that time of seeing the job pend (Slurm may say ReqNodeNotAvail before the drain).
sticky_campaign() {
  # Slurm puts the job on the lowest nodes only when they are free: a job of the last scenario may
  # still be completing on one. A blocker ($2) keeps its node.
  wait_until 60 all_idle "${2:-}" || echo "not every node idle after 60 s: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
  NODE=$(all_nodes | head -1)
  fault sticky-bad "$NODE"
  check "$1: $NODE is marked sticky-bad before the campaign starts" test -e "$slow/sticky-bad/$NODE"
  STEADY_TIMEOUT=30s new_campaign "$1" "--steps 100 --step-seconds 0.05 --ckpt-every 10"
  sed -i 's/^  nodes: 1$/  nodes: 3/; s/^  backoff_max: 2s$/  backoff_max: 2s\n  exclusion_relax_after: 8s/' "$CONF"
}

scenario "sticky bad node (the trainer crashes whenever it runs there) -> excluded after its first failure, the ledger holds exactly that node, campaign completes"
sticky_campaign sticky
run_campaign 240
fault sticky-clear "$NODE"
echo "how the training processes ended:"; trainer_endings | sed 's/^/  /'
echo "attempts: $(attempt_numbers | tr '\n' ' '); last on $(nodes_of "$(job_of_attempt "$(attempt_numbers | tail -1)")" | tr '\n' ' ')"
check "sticky: campaign completed" [ "$RC" -eq 0 ]
check "sticky: the ledger holds exactly the sticky node" \
  [ "$(excluded_nodes)" = "$NODE" ]
check "sticky: excluded after its first failure (srun named it first), the second attempt ran" [ "$(attempt_numbers | tr '\n' ' ')" = "1 2 " ]
check "sticky: the last attempt does not use it" job_avoids "$(job_of_attempt 2)" "$NODE"
check "sticky: result equals a failure-free run's" result_is_exact
check "sticky: steps executed within bounds (100..110): $(steps_executed)" in_range "$(steps_executed)" 100 110
scenario_done

scenario "exclusions that leave a pending job too few nodes -> the oldest is dropped in place, the job runs"
blocker_node=$(all_nodes | tail -1)
blocker=$(sbatch --parsable --exclusive -w "$blocker_node" -N1 -o /dev/null --wrap 'sleep 600')
wait_until 30 job_running "$blocker"
sticky_campaign relax "$blocker_node"
start_campaign
# Attempt 2 excludes the sticky node (named first by attempt 1's failure) and waits for the blocked one.
attempt2_pending() { local j; j=$(job_of_attempt 2); [ -n "$j" ] && [ "$(job_state "$j")" = PENDING ]; }
wait_until 120 attempt2_pending
job2=$(job_of_attempt 2)
fault sticky-clear "$NODE"  # the node was repaired meanwhile
echo "sticky marks left in $slow: [$(ls "$slow/sticky-bad" 2>&1 | tr '\n' ' ')]"
check "relax: attempt 2 pends excluding the sticky node" job_excludes "$job2" "$NODE"
fault drain "$blocker_node" "taken for maintenance"  # now the exclusion leaves too few nodes
t0=$(date +%s)
wait_until 60 job_running "$job2"; ran=$?
echo "attempt 2 (job $job2) RUNNING $(( $(date +%s) - t0 ))s after the drain, on $(nodes_of "$job2" | tr '\n' ' ')"
check "relax: an exclusions-relaxed event names the sticky node" has_event exclusions-relaxed node="$NODE"
job_keeps_node() { ! job_excludes "$@"; }
check "relax: Slurm's ExcNodeList of the job no longer has it" job_keeps_node "$job2" "$NODE"
check "relax: the job runs" [ "$ran" -eq 0 ]
wait_campaign 180
check "relax: campaign completed" [ "$RC" -eq 0 ]
check "relax: result equals a failure-free run's" result_is_exact
scancel "$blocker"
fault undrain "$blocker_node"
scenario_done

# Drives the campaign with `mlsup tick` every 2 s, as cron would, until a tick reports its end (at
# most LIMIT seconds); sets RC and keeps the last tick's output in $CDIR/tick.out.
tick_until_done() {
  local deadline=$(( $(date +%s) + $1 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    "$MLSUP" tick "$CONF" > "$CDIR/tick.out" 2>&1; RC=$?
    # A tick that decided nothing prints nothing; one that ended the campaign says why last.
    tail -n 1 "$CDIR/tick.out" | grep "^mlsup: " >/dev/null && ! grep -q "goes on\|nothing done" "$CDIR/tick.out" && return 0
    sleep 2
  done
  RC=124
}

scenario "the same, driven by cron ticks (a new process every 2 s) -> the same decisions: excluded, pending, relaxed, completed"
blocker=$(sbatch --parsable --exclusive -w "$blocker_node" -N1 -o /dev/null --wrap 'sleep 600')
wait_until 30 job_running "$blocker"
sticky_campaign relax-ticks "$blocker_node"
tick_until_done 240 &
ticker=$!
wait_until 150 attempt2_pending
job2=$(job_of_attempt 2)
fault sticky-clear "$NODE"
echo "sticky marks left in $slow: [$(ls "$slow/sticky-bad" 2>&1 | tr '\n' ' ')]"
check "relax ticks: attempt 2 pends excluding the sticky node" job_excludes "$job2" "$NODE"
fault drain "$blocker_node" "taken for maintenance"
t0=$(date +%s)
wait_until 60 job_running "$job2"; ran=$?
echo "attempt 2 (job $job2) RUNNING $(( $(date +%s) - t0 ))s after the drain, under ticks"
check "relax ticks: the job runs" [ "$ran" -eq 0 ]
check "relax ticks: the sticky node is out of its ExcNodeList" job_keeps_node "$job2" "$NODE"
wait "$ticker"
echo "last tick: $(tail -1 "$CDIR/tick.out")"
check "relax ticks: campaign completed" grep -q "the training completed" "$CDIR/tick.out"
check "relax ticks: attempts 1 2, as under run" [ "$(attempt_numbers | tr '\n' ' ')" = "1 2 " ]
check "relax ticks: one exclusion relaxed" [ "$(relaxed_count)" -eq 1 ]
check "relax ticks: result equals a failure-free run's" result_is_exact
scancel "$blocker"
fault undrain "$blocker_node"
scenario_done

# Chain mode (slurm.array N%1): the chain's array id.
chain_of_campaign() { job_of_attempt 1; }

scenario "chain mode (--array=1-8%1): sticky bad node -> kept out of the queued tasks, the ledger holds exactly it"
sticky_campaign chain-sticky
as_chain
run_campaign 240
fault sticky-clear "$NODE"
last=$(claimed_attempts | tail -1)
echo "how the training processes ended:"; trainer_endings | sed 's/^/  /'
echo "claimed attempts: $(claimed_attempts | tr '\n' ' '); last on $(nodes_of "$(task_of_attempt "$last")" | tr '\n' ' '); $(event_count handed-over) hand-overs, sbatch $(sbatch_count) time(s)"
check "chain sticky: campaign completed" [ "$RC" -eq 0 ]
check "chain sticky: one array submitted for every attempt" one_submission_for_all
check "chain sticky: each attempt ran as a task of it" [ "$(claimed_attempts)" = "$(attempt_numbers)" ]
check "chain sticky: the ledger holds exactly the sticky node" \
  [ "$(excluded_nodes)" = "$NODE" ]
check "chain sticky: the queued tasks' ExcNodeList holds it (read back from Slurm)" job_excludes "$(chain_of_campaign)" "$NODE"
check "chain sticky: the last attempt's task does not use it" job_avoids "$(task_of_attempt "$last")" "$NODE"
check "chain sticky: result equals a failure-free run's" result_is_exact
check "chain sticky: steps executed within bounds (100..110): $(steps_executed)" in_range "$(steps_executed)" 100 110
check "chain sticky: the rest of the chain was cancelled" has_event chain-cancelled
scenario_done

scenario "chain mode: power loss (node frozen), SlurmdTimeout=300 -> the next queued task runs without the node"
# The next task needs two of the three other nodes: one that shared the frozen task is freed only
# ~30 s later (its release goes through the dead node), so the other two must not be busy with a job
# of the last scenario.
wait_until 60 all_idle || echo "not every node idle after 60 s: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
STEADY_TIMEOUT=5s SAVE_TIMEOUT=8s new_campaign chain-powerloss "--steps 300 --step-seconds 0.1 --ckpt-every 10"
sed -i 's/^  nodes: 1$/  nodes: 2/' "$CONF"
as_chain
start_campaign
wait_until 90 heartbeat_at_least 30
JOB=$(task_of_attempt 1)
NODE=$(nodes_of "$JOB" | head -1)
FAULT_AT=$(date +%s.%N)
fault freeze "$NODE"
FAULT_DONE=$(date +%s.%N)
chain_replaced() { local j; j=$(task_of_attempt 2); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }
wait_until 120 chain_replaced
TOOK=$(seconds_since "$FAULT_DONE")
state=$(sinfo -h -N -n "$NODE" -o '%T' | head -1)
echo "nodes then: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
echo "froze $NODE of task $JOB (freezing took $(seconds_between "$FAULT_AT" "$FAULT_DONE") s); attempt 2 = task $(task_of_attempt 2) RUNNING ${TOOK}s after on $(nodes_of "$(task_of_attempt 2)" | tr '\n' ' ')"
check "chain power loss: the next task runs within steady timeout + probe + 20 s of the fault (${TOOK} s)" within_s "$TOOK" 30
# Where the time went: mlsup's events since the fault, and Slurm's view of the task that replaced it.
events_since "$FAULT_DONE"
scontrol -o show job "$(task_of_attempt 2)" | tr ' ' '\n' | grep -E '^(SubmitTime|EligibleTime|StartTime|Reason|ExcNodeList)=' | tr '\n' ' '; echo
check "chain power loss: it does not use the frozen node" job_avoids "$(task_of_attempt 2)" "$NODE"
check "chain power loss: Slurm has not marked the frozen node down yet ($state)" sh -c "echo '$state' | grep -qvE 'down|drain'"
check "chain power loss: no new array was submitted" [ "$(sbatch_count)" -eq 1 ]
fault revive "$NODE" --timeout 30
wait_campaign 300
check "chain power loss: campaign completed" [ "$RC" -eq 0 ]
check "chain power loss: result equals a failure-free run's" result_is_exact
scenario_done

finish
