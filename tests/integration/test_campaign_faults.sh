#!/usr/bin/env bash
# End-to-end campaigns through supervisor crashes, racing ticks, a controller outage, hangs, the
# pre-timeout signal and the save switch, on the live cluster with the test trainer.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

sbatch_shim

for point in after-intent after-sbatch after-submitted after-ended; do
  scenario "kill -9 of the supervisor at $point, then run again -> one job per attempt"
  new_campaign "crash-$point" "--steps 40 --step-seconds 0.05 --ckpt-every 10 --fail-at-step 20 --fail-attempts 1"
  MLSUP_CRASH_AT=$point timeout -s KILL 120 "$MLSUP" run "$CONF" > "$CDIR/run1.out" 2>&1
  echo "first run: exit $? (137 = killed at the crash point)"
  run_campaign 180
  check "$point: campaign completed after the restart" [ "$RC" -eq 0 ]
  check "$point: exactly one job per attempt" [ "$(jobs_of_campaign)" -eq 2 ]
  check "$point: result equals a failure-free run's" result_is_exact
  scenario_done
done

scenario "an sbatch that submits and then hangs; the supervisor is killed; run again -> adopts the job"
new_campaign hung-sbatch "--steps 40 --step-seconds 0.05 --ckpt-every 10"
make_sbatch_wrapper "" "sleep 600"
PATH="$shim/bin:$PATH" "$MLSUP" run "$CONF" > "$CDIR/run1.out" 2>&1 &
runner=$!  # mlsup itself, so that kill -9 hits the supervisor
wait_until 60 sh -c "[ \"\$(scontrol -o show job 2>/dev/null | grep -c 'Comment=mlsup:$CNAME:')\" -ge 1 ]"
kill -9 "$runner"; wait "$runner" 2>/dev/null
pkill -f "$shim/bin/sbatch" 2>/dev/null
run_campaign 180
check "hung sbatch: campaign completed" [ "$RC" -eq 0 ]
check "hung sbatch: the job was adopted, not submitted again" [ "$(jobs_of_campaign)" -eq 1 ]
check "hung sbatch: the adoption is in the event log" has_event adopted
scenario_done

scenario "chain mode, the supervisor killed: a task fails, the next one starts by itself from the newest checkpoint mlsup saw; run again -> adopts its claim"
new_campaign chain-unsupervised "--steps 400 --step-seconds 0.05 --ckpt-every 20 --fail-at-step 300 --fail-attempts 1"
sed -i 's/^  time: "00:10:00"$/  time: "00:10:00"\n  array: "1-4%1"\n  chain_start_wait: 3s/' "$CONF"
start_campaign
wait_until 90 heartbeat_at_least 260  # 13 s of training: mlsup has put a checkpoint into next.env
kill -9 "$RUNNER"; wait "$RUNNER" 2>/dev/null
claim2="$STATE/chain/claims/2/task"
wait_until 60 test -s "$claim2"  # attempt 1 fails at step 300; task 2 waits 3 s for values, then starts
echo "task 2's claim, made while no supervisor ran: $(cat "$claim2" 2>/dev/null)"
check "unsupervised chain: the next task took attempt 2 by itself" grep -q ' fallback /' "$claim2"
# next.env gets the newest checkpoint every 10 s at most: the claim names the one mlsup last recorded.
claimed_step=$(grep -o 'step_[0-9]*' "$claim2" | tail -n 1 | cut -d_ -f2)
check "unsupervised chain: task 2 resumes from a checkpoint mlsup recorded (step ${claimed_step:-none}), not from scratch" [ "${claimed_step:-0}" -gt 0 ]
start_campaign
wait_campaign 180
check "unsupervised chain: campaign completed" [ "$RC" -eq 0 ]
check "unsupervised chain: one array for all of it" one_submission_for_all
check "unsupervised chain: the restarted supervisor adopted the claim" has_event claimed attempt=2 values=fallback
check "unsupervised chain: result equals a failure-free run's" result_is_exact
# Attempt 1 ran steps 0-299; attempt 2 resumed from the claimed checkpoint (from scratch: 700).
bound=$(( 300 + 400 - ${claimed_step:-0} ))
check "unsupervised chain: steps executed within bounds (<= 300 + 400 - ${claimed_step:-0} = $bound): $(steps_executed)" [ "$(steps_executed)" -le "$bound" ]
scenario_done

scenario "two ticks at once with a slow sbatch -> one acts"
new_campaign ticks "--steps 40 --step-seconds 0.05 --ckpt-every 10"
make_sbatch_wrapper "sleep 3" ""
PATH="$shim/bin:$PATH" "$MLSUP" tick "$CONF" > "$CDIR/tick1.out" 2>&1 &
t1=$!
sleep 0.3
PATH="$shim/bin:$PATH" "$MLSUP" tick "$CONF" > "$CDIR/tick2.out" 2>&1
wait "$t1"
cat "$CDIR/tick1.out" "$CDIR/tick2.out" | grep '^mlsup:'
check "ticks: one tick submitted" grep -q "submitted attempt=1" "$CDIR/tick1.out"
check "ticks: the other found it acting, did nothing and said nothing (exit 0)" [ ! -s "$CDIR/tick2.out" ]
check "ticks: one job" [ "$(jobs_of_campaign)" -eq 1 ]
for i in $(seq 60); do
  "$MLSUP" tick "$CONF" > "$CDIR/tick.out" 2>&1; RC=$?
  grep -q "completed" "$CDIR/tick.out" && break
  sleep 1
done
check "ticks: cron ticks complete the campaign" grep -q "the training completed" "$CDIR/tick.out"
check "ticks: still one job" [ "$(jobs_of_campaign)" -eq 1 ]
scenario_done

scenario "slurmctld down for several polls mid-campaign -> same job, no submission, no false failure"
new_campaign outage "--steps 200 --step-seconds 0.1 --ckpt-every 20"
start_campaign
wait_until 60 heartbeat_at_least 1
"$REPO/tests/cluster/cluster.sh" stop-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1
# The controller stays down until the supervisor has seen a failed query: a fixed few seconds
# can fall inside one query's own connect retries (MessageTimeout), and then no pass fails.
sleep 3
wait_until 60 has_event slurm-unavailable
"$REPO/tests/cluster/cluster.sh" start-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1
wait_campaign 300
check "outage: campaign completed" [ "$RC" -eq 0 ]
check "outage: one submission" [ "$(sbatch_count)" -eq 1 ]
check "outage: one job" [ "$(jobs_of_campaign)" -eq 1 ]
check "outage: the outage is in the event log" has_event slurm-unavailable
check "outage: no failure" [ "$(event_count "" class=failed)" -eq 0 ]
check "outage: result equals a failure-free run's" result_is_exact
scenario_done

scenario "hang (every task SIGSTOPped) -> detected with the calibrated timeout, evidence kept, fenced, cancelled, resubmitted"
# steady_timeout 1m, calibrated from the pace seen (a step per poll) to calibrate_min 5s.
STEADY_TIMEOUT=1m new_campaign hang "--steps 1200 --step-seconds 0.05 --ckpt-every 50"
sed -i 's/^  save_timeout: 2m$/  save_timeout: 2m\n  calibrate: true\n  calibrate_factor: 3\n  calibrate_min: 5s\n  hang_command: srun --overlap --jobid "$MLSUP_JOB_ID" -N1 -n1 printenv SLURMD_NODENAME/' "$CONF"
start_campaign
# The supervisor says when it has seen 20 steps (the reads in a save phase do not count).
timeout_calibrated() { [ "$(status_query 's["hang_timeout"]["calibrated"]')" = True ]; }
wait_until 120 timeout_calibrated
check "hang: the timeout was calibrated before the training ended" [ "$(status_field step)" -lt 1100 ]
job=$(scontrol -o show job | grep "Comment=mlsup:$CNAME:" | grep -o '^JobId=[0-9]*' | cut -d= -f2 | head -1)
# Stopped inside a save (the heartbeat says "saving"), heartbeat.save_timeout (2m) would decide, not the
# calibrated steady timeout: the tasks are let go and stopped again until they stop outside a save.
for ((try = 0; try < 10; try++)); do
  hung_at=$(date +%s)
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" hang-job "$job" >/dev/null 2>&1
  beat=$(cat "$STATE/heartbeats/attempt-1" 2>/dev/null)
  [[ $beat == *saving* ]] || break
  echo "stopped inside a save (heartbeat \"$beat\"): let go and stopped again"
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" unhang-job "$job" >/dev/null 2>&1
  sleep 0.3
done
wait_until 60 has_event cancelling
check "hang: found within the calibrated timeout plus a few polls" [ $(( $(date +%s) - hung_at )) -le 15 ]
echo "hang detected $(( $(date +%s) - hung_at ))s after the tasks stopped (steady timeout 1m calibrated to 5s, poll 1s)"
check "hang: the event says the timeout was calibrated" has_event hang-detected calibrated=true
evidence_names_a_node() { sinfo -h -N -o '%N' | grep -xF "$(head -1 "$STATE/attempts/1/hang-evidence.txt")" >/dev/null; }
check "hang: the hang command ran inside the job and its output was kept" evidence_names_a_node
wait_campaign 300
check "hang: campaign completed" [ "$RC" -eq 0 ]
check "hang: the hang was classed and resubmitted" has_event attempt-ended class=hang action=resubmit
check "hang: the abandoned attempt was fenced" test -f "$STATE/fenced/1"
check "hang: tasks stopped on live nodes exclude no node" [ "$(exclusion_count)" -eq 0 ]
check "hang: result equals a failure-free run's" result_is_exact
check "hang: steps executed <= target + one checkpoint interval" [ "$(steps_executed)" -le 1250 ]
scenario_done

scenario "save switch (periodic checkpoints off) -> a new checkpoint, training goes on"
new_campaign save "--steps 300 --step-seconds 0.05 --ckpt-every 0"
start_campaign
wait_until 60 heartbeat_at_least 50
"$MLSUP" save "$CONF" >/dev/null
wait_until 30 sh -c "ls '$STATE/checkpoints' 2>/dev/null | grep -q '^step_'"
check "save: a checkpoint appeared" sh -c "ls '$STATE/checkpoints' | grep -q '^step_'"
check "save: the training deleted the switch" wait_until 10 sh -c "[ ! -e '$STATE/save-switch' ]"
wait_campaign 240
check "save: the campaign went on and completed" [ "$RC" -eq 0 ]
check "save: in one job" [ "$(jobs_of_campaign)" -eq 1 ]
scenario_done

scenario "time limit with the pre-timeout signal (periodic checkpoints off) -> saved, resubmitted, no step redone"
new_campaign timelimit "--steps 1200 --step-seconds 0.05 --ckpt-every 0" "target:
  steps: 1200"
sed -i 's/time: "00:10:00"/time: "00:01:00"/; s/signal_lead: 60s/signal_lead: 45s/' "$CONF"
run_campaign 420
check "time limit: campaign completed" [ "$RC" -eq 0 ]
check "time limit: more than one attempt" [ "$(jobs_of_campaign)" -ge 2 ]
check "time limit: no step redone" [ "$(steps_executed)" -eq 1200 ]
check "time limit: result equals a failure-free run's" result_is_exact
check "time limit: every attempt resumed from what mlsup recorded" resumes_match
scenario_done

scenario "signal_lead: auto (3-minute limit, 2 s saves) -> attempt 2 gets the lead sized from attempt 1's measured saves, and its time limit ends in a saved checkpoint"
new_campaign leadauto "--steps 100000 --step-seconds 0.05 --ckpt-every 40 --slow-save-seconds 2 --fail-at-step 130 --fail-attempts 1"
sed -i 's/time: "00:10:00"/time: "00:03:00"/; s/signal_lead: 60s/signal_lead: auto/' "$CONF"
start_campaign
second_running() { [ "$(status_query 'len(s["history"]) >= 2 and s["job_state"] == "RUNNING"')" = True ]; }
wait_until 90 second_running
echo "attempt 1: lead $(attempt_field 1 signal_lead), class $(attempt_field 1 class); attempt 2: lead $(attempt_field 2 signal_lead); pace $(status_query 's["pace"]'); signal_lead $(status_query 's["signal_lead"]')"
check "lead auto: attempt 1 (nothing measured) had the configured lead, at most half the 3-minute limit: 90 s" [ "$(attempt_field 1 signal_lead)" = 90 ]
check "lead auto: saves were measured before attempt 2 (about 2 s each)" [ "$(status_query '1.5 <= s["pace"]["save_p95"] <= 4')" = True ]
check "lead auto: attempt 2's lead is the one sized from them (status's signal_lead.next), 1.5 x (save + step) + 60 s, not 90" \
  bash -c "[ '$(attempt_field 2 signal_lead)' = '$(status_query 's["signal_lead"]["next"]')' ] && [ '$(attempt_field 2 signal_lead)' -ge 62 ] && [ '$(attempt_field 2 signal_lead)' -le 70 ]"
ck_before=$(status_query 's["checkpoint"]["step"]')
attempt2_ended() { [ "$(attempt_field 2 ended)" = True ]; }
wait_until 200 attempt2_ended
echo "attempt 2 ended: class $(attempt_field 2 class) at step $(attempt_field 2 end_step); newest checkpoint step $(status_query 's["checkpoint"]["step"]') (was $ck_before)"
check "lead auto: attempt 2 ended on the pre-timeout signal, not killed by the limit" [ "$(attempt_field 2 class)" != timeout ]
check "lead auto: ... in a saved checkpoint at the step it ended" \
  [ "$(status_query 's["checkpoint"]["step"]')" = "$(attempt_field 2 end_step)" ]
"$MLSUP" cancel "$CONF" > /dev/null 2>&1  # ends the run should it go on (it completes: no target.steps)
wait_campaign 120
scenario_done

scenario "a request Slurm can never meet (more nodes than the partition has) -> refused, never the training's failure: no restart budget spent, stop (exit 14) once policy.submit_retry_for has passed"
new_campaign refused "--steps 20 --step-seconds 0.05"
sed -i "s/^  nodes: 1\$/  nodes: $(( $(sinfo -h -N -o %N | sort -u | wc -l) + 5 ))/; s/^  backoff_max: 2s\$/  backoff_max: 2s\n  submit_retry_for: 15s/" "$CONF"
run_campaign 120
check "refused: stopped with exit 14" [ "$RC" -eq 14 ]
classes=$(status_query '[a["class"] for a in s["history"]]' | sort -u | paste -sd,)
check "refused: every attempt ended as refused ($classes), none as the training's failure" [ "$classes" = refused ]
check "refused: more than one try within policy.submit_retry_for" [ "$(attempt_numbers | wc -l)" -ge 2 ]
check "refused: no restart budget spent" [ "$(status_query 's["restarts_by_class"].get("failed", 0)')" = 0 ]
check "refused: no job of the campaign left in Slurm's queue" [ -z "$(squeue -h -t PD,R -o %k | grep "mlsup:$CNAME:")" ]
check "refused: no stuck-job alert beside the refusal" [ "$(event_count pending-stuck)" -eq 0 ]
scenario_done

finish
