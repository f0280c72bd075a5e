#!/usr/bin/env bash
# Spare nodes (slurm.spare_nodes) on the live cluster (SlurmdTimeout=10), with the test trainer: a
# training node's crash or power loss is survived inside the same job (no new submission), and the
# batch host's loss, which no job survives (Slurm keeps the --no-kill job RUNNING on its other nodes
# with nothing left in it), ends the job as a node fault and a new job is submitted.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

CLUSTER_DIR=$(dirname "$SLURM_CONF")
fault() { "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" "$@" >/dev/null 2>&1; }
all_idle() { ! sinfo -h -N -o '%T' | grep -v '^idle$' >/dev/null; }
batch_host_of() { scontrol -o show job "$1" | grep -o ' BatchHost=[^ ]*' | cut -d= -f2; }
job_running() { local j; j=$(job_of_attempt "$1"); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }
job_avoids() { ! nodes_of "$1" | grep -x "$2" >/dev/null; }

scenario "2 nodes + 1 spare, the batch host crashes -> the job (--no-kill, running on without its batch script) is cancelled as a node fault, the host excluded, a new job completes exactly"
new_campaign spare-batch "--steps 300 --step-seconds 0.1 --ckpt-every 10"
sed -i 's/^  nodes: 1$/  nodes: 2\n  spare_nodes: 1/' "$CONF"
start_campaign
wait_until 90 heartbeat_at_least 30
JOB=$(job_of_attempt 1)
HOST=$(batch_host_of "$JOB")
FAULT_AT=$(date +%s.%N)
fault crash "$HOST"
echo "crashed $HOST, the batch host of job $JOB ($(nodes_of "$JOB" | paste -sd,))"
wait_until 120 job_running 2
echo "attempt 2's job $(job_of_attempt 2) RUNNING $(seconds_since "$FAULT_AT") s after the crash (SlurmdTimeout=10; the steady timeout is 1m)"
check "attempt 1 ended as a node fault, not as a hang" [ "$(attempt_field 1 class)" = node_fail ]
check "the ledger holds exactly the batch host" [ "$(excluded_nodes)" = "$HOST" ]
check "the replacement does not use it" job_avoids "$(job_of_attempt 2)" "$HOST"
check "the old job is gone from Slurm's running jobs" sh -c "[ \"\$(scontrol -o show job $JOB | grep -o 'JobState=[A-Z]*')\" != JobState=RUNNING ]"
fault revive "$HOST" --timeout 30
wait_campaign 300
check "campaign completed" [ "$RC" -eq 0 ]
check "result equals a failure-free run's" result_is_exact
wait_until 60 all_idle
scenario_done

# A 2-node campaign with 1 spare; once it trains, FAULT (crash|freeze) hits its training node that is
# not the batch host, and attempt 2 is waited for. Sets JOB, HOST (batch host), VICTIM and SPARE.
spare_fault() {
  new_campaign "spare-$1" "--steps 300 --step-seconds 0.1 --ckpt-every 10"
  sed -i 's/^  nodes: 1$/  nodes: 2\n  spare_nodes: 1/' "$CONF"
  start_campaign
  wait_until 90 heartbeat_at_least 30
  JOB=$(job_of_attempt 1)
  HOST=$(batch_host_of "$JOB")
  VICTIM=$(status_query "[n for n in next(a[\"step_nodes\"] for a in s[\"history\"] if a[\"number\"] == 1) if n != \"$HOST\"][0]")
  SPARE=$(nodes_of "$JOB" | grep -vx -e "$HOST" -e "$VICTIM")
  local at
  at=$(date +%s.%N)
  fault "$1" "$VICTIM"
  echo "$1 of $VICTIM (the batch host is $HOST) of job $JOB ($(nodes_of "$JOB" | paste -sd,))"
  wait_until 120 job_running 2
  echo "attempt 2 runs in job $(job_of_attempt 2) $(seconds_since "$at") s after the fault"
}

# What both faults must end with: one job, the survivor keeping its rank beside the spare, the result.
survived_in_job() {
  check "attempt 2 runs in the same job" [ "$(job_of_attempt 2)" = "$JOB" ]
  fault revive "$VICTIM" --timeout 30
  wait_campaign 300
  check "campaign completed" [ "$RC" -eq 0 ]
  check "one sbatch for the whole campaign" [ "$(sbatch_count)" -eq 1 ]
  check "attempt 2 ran on the survivor, which kept its rank, and the spare: not on the failed node" \
    [ "$(status_query 'next(a["step_nodes"] for a in s["history"] if a["number"] == 2)' | paste -sd,)" = "$HOST,$SPARE" ]
  check "result equals a failure-free run's" result_is_exact
  wait_until 60 all_idle || scontrol update NodeName="$VICTIM" State=RESUME 2>/dev/null
}

scenario "2 nodes + 1 spare, a training node other than the batch host crashes -> the training restarts inside the same job on the spare, no new submission, exact result"
spare_fault crash
survived_in_job
scenario_done

scenario "2 nodes + 1 spare, power loss of a training node other than the batch host -> the hang is found, the run's steps killed, the training restarts inside the same job on the spare, exact result"
STEADY_TIMEOUT=5s SAVE_TIMEOUT=8s spare_fault freeze
check "attempt 1 ended as a hang" [ "$(attempt_field 1 class)" = hang ]
check "the frozen node is excluded" [ "$(excluded_nodes)" = "$VICTIM" ]
survived_in_job
scenario_done

finish
