#!/usr/bin/env bash
# End-to-end checks of the reconcile pass's promises on the live cluster: a heartbeat read while its
# writer is between truncate and write, an sbatch that outlasts the lease's TTL with a cron tick
# beside the run, and a job suspended and resumed by scontrol.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

sbatch_shim

# The torn write comes 10 s into the training, so that a supervisor slowed by a loaded machine has read
# the heartbeat with content before it (an empty file never read full is no torn read).
scenario "a heartbeat written in place (empty for 3 s, three polls) long after start-up -> the empty reads are ignored, the job lives"
STEADY_TIMEOUT=10s new_campaign torn "--steps 140 --step-seconds 0.1 --ckpt-every 20 --torn-heartbeat-at-step 100 --torn-heartbeat-seconds 3"
sed -i 's/^  startup_timeout: 2m$/  startup_timeout: 3s/' "$CONF"
run_campaign 120
check "torn: campaign completed" [ "$RC" -eq 0 ]
check "torn: one attempt" [ "$(status_field attempts)" = 1 ]
check "torn: the empty reads were seen and reported" [ "$(event_count heartbeat-empty-read)" -ge 1 ]
check "torn: no hang was detected" [ "$(event_count hang-detected)" -eq 0 ]
check "torn: result equals a failure-free run's" result_is_exact
scenario_done

scenario "an sbatch that takes longer than the lease's TTL (30 s) and a cron tick beside the run -> the tick finds the lease held, one job"
new_campaign slow-sbatch "--steps 40 --step-seconds 0.05 --ckpt-every 10" "lease_ttl: 30s"
make_sbatch_wrapper "sleep 36" ""
PATH="$shim/bin:$PATH" "$MLSUP" run "$CONF" > "$CDIR/run.out" 2>&1 &
RUNNER=$!
sleep 33
"$MLSUP" tick --verbose "$CONF" > "$CDIR/tick.out" 2>&1
echo "tick at 33 s: $(tail -1 "$CDIR/tick.out")"
check "slow sbatch: the tick did nothing, the lease being held" grep -q "nothing done" "$CDIR/tick.out"
wait_campaign 180
check "slow sbatch: campaign completed" [ "$RC" -eq 0 ]
check "slow sbatch: one job" [ "$(jobs_of_campaign)" -eq 1 ]
check "slow sbatch: result equals a failure-free run's" result_is_exact
scenario_done

scenario "a job suspended for 12 s (steady timeout 5 s) and resumed -> not taken for a hang, campaign completes"
STEADY_TIMEOUT=5s new_campaign suspend "--steps 150 --step-seconds 0.1 --ckpt-every 50"
start_campaign
wait_until 60 heartbeat_at_least 30
job=$(scontrol -o show job | grep "Comment=mlsup:$CNAME:" | grep -o '^JobId=[0-9]*' | cut -d= -f2 | head -1)
scontrol suspend "$job"
sleep 12
check "suspend: the job is suspended" [ "$(job_state "$job")" = SUSPENDED ]
scontrol resume "$job"
wait_campaign 120
check "suspend: campaign completed" [ "$RC" -eq 0 ]
check "suspend: one attempt, no hang" sh -c "[ '$(status_field attempts)' = 1 ] && [ '$(event_count hang-detected)' -eq 0 ]"
check "suspend: the job running again was seen" [ "$(event_count suspension-ended)" -ge 1 ]
check "suspend: result equals a failure-free run's" result_is_exact
scenario_done

finish
