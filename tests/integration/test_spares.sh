#!/usr/bin/env bash
# Jobs that outlive a node (sbatch --no-kill, what spare nodes build on), on the live cluster
# (SlurmdTimeout=10): a --no-kill job whose batch host fails is kept RUNNING by Slurm on its other
# nodes with nothing left in it; mlsup must end it as a node fault rather than leave it to its limit.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

CLUSTER_DIR=$(dirname "$SLURM_CONF")
fault() { "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" "$@" >/dev/null 2>&1; }
all_idle() { ! sinfo -h -N -o '%T' | grep -qv '^idle$'; }
batch_host_of() { scontrol -o show job "$1" | grep -o ' BatchHost=[^ ]*' | cut -d= -f2; }
job_running() { local j; j=$(job_of_attempt "$1"); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }
job_avoids() { ! nodes_of "$1" | grep -qx "$2"; }

scenario "a --no-kill job loses its batch host -> cancelled as a node fault, the host excluded, the next job completes exactly"
new_campaign nokill-batch "--steps 300 --step-seconds 0.1 --ckpt-every 10"
sed -i 's/^  nodes: 1$/  nodes: 2\n  extra_args: ["--no-kill"]/' "$CONF"
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

finish
