#!/usr/bin/env bash
# The lifecycle verbs on the live cluster with the test trainer: a stop (the kill switch, a crash
# loop, a spent restart budget) resumed completes with the result of an uninterrupted run; pause --now then resume, and a
# pause that holds a queued job, while `mlsup run` holds the campaign; cancel, beside a run and
# alone, leaves no job of the campaign in Slurm; wrong uses change nothing. State is read through
# `mlsup status --json`, Slurm's through squeue/scontrol. Every scenario has a hard timeout and
# prints its wall time.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

# Jobs of this campaign that Slurm still has queued or running.
queued_jobs() { squeue -h -o '%k' 2>/dev/null | grep -c "^mlsup:$CNAME:" || true; }
state_is() { [ "$(status_field state)" = "$1" ]; }
said() { grep -q "$1" "$CDIR/verb.out"; }

scenario "kill switch -> resume -> run completes with an uninterrupted run's result; wrong uses change nothing"
new_campaign resume "--steps 150 --step-seconds 0.05 --ckpt-every 10"
start_campaign
wait_until 90 heartbeat_at_least 20
"$MLSUP" stop "$CONF" >/dev/null
wait_campaign 120
check "kill: stopped by the switch (exit 10)" [ "$RC" -eq 10 ]
verb resume "$CONF"
check "kill: resume exits 0 and says the next run carries it on" sh -c "[ $VRC -eq 0 ] && grep -q 'carries the campaign on' '$CDIR/verb.out'"
check "kill: status says running, still one attempt (resume does not supervise)" \
  sh -c "[ '$(status_field state)' = running ] && [ '$(status_field attempts)' = 1 ]"
run_campaign 120
check "kill: the resumed campaign completed" [ "$RC" -eq 0 ]
check "kill: result equals an uninterrupted run's" result_is_exact
check "kill: attempt 2 resumed from the checkpoint saved on the switch" [ "$(attempt_field 2 resume_step)" -ge 20 ]
check "kill: the same campaign id in both attempts' tags" \
  [ "$(attempt_field 1 tag | cut -d: -f3)" = "$(attempt_field 2 tag | cut -d: -f3)" ]
attempts=$(status_field attempts)
verb resume "$CONF"; check "wrong use: resume of a completed campaign exits 17" [ "$VRC" -eq 17 ]
verb cancel "$CONF"; check "wrong use: cancel of a completed campaign exits 18" [ "$VRC" -eq 18 ]
verb pause "$CONF"; check "wrong use: pause of a completed campaign exits 18" [ "$VRC" -eq 18 ]
check "wrong use: still completed, no attempt more" \
  sh -c "[ '$(status_field state)' = completed ] && [ '$(status_field attempts)' = $attempts ]"
scenario_done

scenario "crash loop (exit 11) -> resume -> completes: the crash-loop count starts afresh"
new_campaign budget "--steps 40 --step-seconds 0.05 --ckpt-every 10 --fail-at-step 5 --fail-attempts 1,2,3"
run_campaign 150
check "budget: stopped as a crash loop (exit 11)" [ "$RC" -eq 11 ]
verb resume "$CONF"
check "budget: resume exits 0" [ "$VRC" -eq 0 ]
run_campaign 120
check "budget: the resumed campaign completed" [ "$RC" -eq 0 ]
check "budget: result equals an uninterrupted run's" result_is_exact
check "budget: four attempts in one history" [ "$(status_field attempts)" = 4 ]
scenario_done

scenario "restart budget spent (failed: 1 per 1h, progress each time) -> resume -> completes: the budget starts afresh"
new_campaign spent "--steps 60 --step-seconds 0.05 --ckpt-every 10 --fail-at-step 25 --fail-attempts 1,2"
sed -i 's/^  backoff_max: 2s$/  backoff_max: 2s\n  budgets:\n    failed: 1\/1h/' "$CONF"
run_campaign 150
check "spent: stopped with exit 11" [ "$RC" -eq 11 ]
check "spent: by the failed budget, not as a crash loop" grep -q "failed budget (1 per 1h) is spent" "$CDIR/run.out"
check "spent: two attempts" [ "$(status_field attempts)" = 2 ]
verb resume "$CONF"
check "spent: resume exits 0" [ "$VRC" -eq 0 ]
run_campaign 120
check "spent: the resumed campaign completed" [ "$RC" -eq 0 ]
check "spent: result equals an uninterrupted run's" result_is_exact
check "spent: attempt 3 resumed from a checkpoint of step 20" [ "$(attempt_field 3 resume_step)" -eq 20 ]
scenario_done

scenario "pause --now and resume while mlsup run holds the campaign -> completes with the same result"
new_campaign pausenow "--steps 150 --step-seconds 0.05 --ckpt-every 10"
start_campaign
wait_until 90 heartbeat_at_least 20
verb resume "$CONF"; check "pause: resume of a running campaign exits 17" [ "$VRC" -eq 17 ]
verb pause "$CONF" --now
check "pause: pause --now exits 0, carried out by the run holding the campaign" sh -c "[ $VRC -eq 0 ] && grep -q 'holds campaign' '$CDIR/verb.out'"
check "pause: status says paused once the training saved and exited" wait_until 60 sh -c \
  "[ \"\$('$MLSUP' status '$CONF' --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s[\"state\"], s.get(\"last_end\"))')\" = 'paused kill_switch' ]"
sleep 3
check "pause: the run goes on, nothing new is submitted, no job queued" \
  sh -c "kill -0 $RUNNER && [ '$(status_field attempts)' = 1 ] && [ $(queued_jobs) -eq 0 ]"
verb pause "$CONF"; check "pause: a second pause exits 0 and changes nothing" sh -c "[ $VRC -eq 0 ] && grep -q 'paused already' '$CDIR/verb.out'"
verb resume "$CONF"
check "pause: resume exits 0 (the run carries it out)" [ "$VRC" -eq 0 ]
wait_campaign 120
check "pause: the run completed the campaign" [ "$RC" -eq 0 ]
check "pause: result equals an uninterrupted run's" result_is_exact
check "pause: two attempts" [ "$(status_field attempts)" = 2 ]
scenario_done

scenario "pause holds a queued job while mlsup run holds the campaign; resume releases it"
BLOCKER=$(sbatch --parsable -N4 --exclusive -o /dev/null --wrap "sleep 120")
trap 'scancel "$BLOCKER" 2>/dev/null' EXIT
new_campaign hold "--steps 20 --step-seconds 0.05 --ckpt-every 10"
start_campaign
wait_until 60 sh -c "[ -n \"\$('$MLSUP' status '$CONF' --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get(\"job_id\") or \"\")')\" ]"
JOB=$(status_field job_id)
wait_until 30 sh -c "[ \"\$(scontrol -o show job $JOB | grep -o 'JobState=[A-Z]*')\" = JobState=PENDING ]"
verb pause "$CONF"
check "hold: pause exits 0" [ "$VRC" -eq 0 ]
check "hold: Slurm holds the queued job" wait_until 30 sh -c "scontrol -o show job $JOB | grep -q 'Reason=JobHeld'"
check "hold: status says paused" state_is paused
scancel "$BLOCKER"
sleep 4
check "hold: with the cluster free, the held job still waits" [ "$(job_state "$JOB")" = PENDING ]
verb resume "$CONF"
check "hold: resume exits 0" [ "$VRC" -eq 0 ]
wait_campaign 120
check "hold: the released job completed the campaign" [ "$RC" -eq 0 ]
check "hold: one attempt, the same job" sh -c "[ '$(status_field attempts)' = 1 ] && [ '$(job_of_attempt 1)' = $JOB ]"
scenario_done

scenario "chain mode: pause holds the array's queued tasks, the running one goes on; resume releases them -> completes"
new_campaign chainpause "--steps 150 --step-seconds 0.1 --ckpt-every 10 --fail-at-step 60 --fail-attempts 1"
as_chain
start_campaign
wait_until 90 heartbeat_at_least 10
ARRAY=$(job_of_attempt 1)
verb pause "$CONF"
check "chain pause: pause exits 0" [ "$VRC" -eq 0 ]
check "chain pause: Slurm holds the queued tasks" wait_until 30 sh -c \
  "scontrol -o show job $ARRAY | grep 'ArrayTaskId=2-8' | grep 'Reason=JobHeld' >/dev/null"
check "chain pause: attempt 1's task failed at step 60 and the campaign is paused" wait_until 60 sh -c \
  "[ \"\$('$MLSUP' status '$CONF' --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s[\"state\"], s[\"history\"][0][\"ended\"])')\" = 'paused True' ]"
sleep 4
check "chain pause: no task of the array runs while paused" [ -z "$(squeue -h -r -j "$ARRAY" -t RUNNING -o %i)" ]
check "chain pause: still one attempt" [ "$(status_field attempts)" = 1 ]
verb resume "$CONF"
check "chain pause: resume exits 0" [ "$VRC" -eq 0 ]
wait_campaign 150
check "chain pause: the run completed the campaign" [ "$RC" -eq 0 ]
check "chain pause: result equals an uninterrupted run's" result_is_exact
check "chain pause: one array submitted for both attempts" one_submission_for_all
check "chain pause: each attempt ran as a task of it" [ "$(claimed_attempts)" = "$(attempt_numbers)" ]
check "chain pause: the journal says the queued tasks were held" has_event job-held
check "chain pause: and released" has_event job-released
scenario_done

scenario "cancel while mlsup run holds the campaign -> cancelled, no job left"
new_campaign cancelrun "--steps 100000 --step-seconds 0.05 --ckpt-every 0"
start_campaign
wait_until 90 heartbeat_at_least 5
verb cancel "$CONF"
check "cancel: exits 0, carried out by the run" sh -c "[ $VRC -eq 0 ] && grep -q 'holds campaign' '$CDIR/verb.out'"
wait_campaign 120
check "cancel: the run ends with exit 16" [ "$RC" -eq 16 ]
check "cancel: no job of the campaign in squeue" [ "$(queued_jobs)" -eq 0 ]
check "cancel: status says cancelled" state_is cancelled
check "cancel: the training saved on the kill switch" sh -c "ls '$STATE/checkpoints' | grep -q step_"
scenario_done

scenario "cancel while a save outlasts policy.stop_grace (3 s grace, 6 s saves): the save completes, then the job ends; status shows the saves measured"
new_campaign cancelsave "--steps 100000 --step-seconds 0.05 --ckpt-every 100 --slow-save-seconds 6"
sed -i 's/^  backoff_max: 2s$/  backoff_max: 2s\n  stop_grace: 3s/' "$CONF"
start_campaign
saves_measured() { [ "$(status_query 's["pace"]["saves_measured"] >= 1')" = True ]; }
wait_until 90 saves_measured
echo "pace before the cancel: $(status_query 's["pace"]')"
check "cancel, slow save: status measured a save of about 6 s (p50 within 5-9 s)" \
  [ "$(status_query '5 <= s["pace"]["save_p50"] <= 9')" = True ]
ck_before=$(status_query 's["checkpoint"]["step"]')
verb cancel "$CONF"
wait_campaign 120
ck_after=$(status_query 's["checkpoint"]["step"]')
events_cancelling=$("$MLSUP" events --json "$CONF" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if l.strip() and json.loads(l).get("event") == "cancelling"))')
echo "run exited $RC; cancelling events: $events_cancelling; newest complete checkpoint: step $ck_before before the cancel, $ck_after after"
check "cancel, slow save: the run ends with exit 16" [ "$RC" -eq 16 ]
check "cancel, slow save: mlsup never cancelled the job while it saved (no cancelling event)" [ "$events_cancelling" -eq 0 ]
check "cancel, slow save: the save the switch asked for completed (a newer complete checkpoint)" [ "$ck_after" -gt "$ck_before" ]
scenario_done

scenario "cancel with no supervisor: the verb takes the lease and ends the job itself"
new_campaign cancelalone "--steps 100000 --step-seconds 0.05 --ckpt-every 0"
timeout -s KILL 60 "$MLSUP" tick "$CONF" > "$CDIR/tick.out" 2>&1
wait_until 90 heartbeat_at_least 5
t0=$(date +%s)
verb cancel "$CONF"
took=$(( $(date +%s) - t0 ))
check "cancel alone: exits 0" [ "$VRC" -eq 0 ]
check "cancel alone: done in ${took}s, as soon as the training left on the kill switch (not after the 60 s grace)" \
  [ "$took" -lt 30 ]
check "cancel alone: no job of the campaign in squeue" [ "$(queued_jobs)" -eq 0 ]
check "cancel alone: status says cancelled (exit code 16)" \
  sh -c "[ '$(status_field state)' = cancelled ] && [ '$(status_field exit_code)' = 16 ]"
verb resume "$CONF"
check "cancel alone: a cancelled campaign can be resumed" sh -c "[ $VRC -eq 0 ] && [ '$(status_field state)' = running ]"
verb cancel "$CONF"
check "cancel alone: and cancelled again (no job: at once)" sh -c "[ $VRC -eq 0 ] && [ '$(status_field state)' = cancelled ]"
scenario_done

finish
