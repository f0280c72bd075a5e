#!/usr/bin/env bash
# Hang detection with the default heartbeat settings (no heartbeat section, default poll interval):
# a 2-node training stepping every 2 s runs an evaluation pass of 3 minutes marked as the phase
# "eval" (not taken for a hang), then every task is SIGSTOPped (found hung within 30 s of its last
# step by the calibrated timeout), and the campaign completes with the exact result.
# About 5 minutes, mostly the evaluation pass; the scenario has a hard limit.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

EVAL_AT=30 EVAL_SECONDS=180 HANG_AT=36

# The whole heartbeat of attempt 1 ("<step>" or "<step> eval").
heartbeat_text() { cat "${HB_DIR:-$STATE/heartbeats}/attempt-1" 2>/dev/null; }
in_eval() { [ "$(heartbeat_text)" = "$EVAL_AT eval" ]; }
calibrated() { [ "$(status_query 's["hang_timeout"]["calibrated"]')" = True ]; }
# The time (unix seconds) of the first event of a kind, from mlsup's event log.
first_event_time() {
  "$MLSUP" events "$CONF" --json --kind "$1" | /usr/bin/python3 -c 'import json, sys
print(next((json.loads(l)["time"] for l in sys.stdin if l.strip()), ""))'
}
at_most() { /usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$1" "$2"; }

scenario "default heartbeat settings: a 3-minute eval phase is no hang; a hang after 2 s steps is found within 30 s of the last step"
new_campaign hangdefault "--steps 42 --step-seconds 2 --ckpt-every 10 --eval-at-step $EVAL_AT --eval-seconds $EVAL_SECONDS"
sed -i 's/^  nodes: 1$/  nodes: 2/; s/^  time: "00:10:00"$/  time: "00:15:00"/' "$CONF"
sed -i '/^heartbeat:$/,/^poll_interval: 1s$/d' "$CONF"  # every heartbeat, policy and poll setting at its default
check "the config leaves heartbeat and poll settings at their defaults" sh -c "! grep -qE '^(heartbeat|poll_interval|policy):' '$CONF'"
start_campaign

wait_until 120 calibrated
steady=$(status_query 's["hang_timeout"]["steady"]')
echo "calibrated after $(status_query 's["hang_timeout"]["steps_seen"]') steps: steady timeout ${steady}s (configured $(status_query 's["hang_timeout"]["configured"]')s)"
check "the timeout is calibrated below 30 s by default" at_most "${steady:-999}" 29

wait_until 60 in_eval; entered=$?
eval_t0=$(date +%s)
check "the training entered its evaluation pass" [ "$entered" -eq 0 ]
wait_until $((EVAL_SECONDS + 60)) heartbeat_at_least $((EVAL_AT + 1))
eval_took=$(( $(date +%s) - eval_t0 ))
echo "the evaluation pass held the heartbeat at '$EVAL_AT eval' for ${eval_took}s"
check "the evaluation pass lasted its 3 minutes" [ "$eval_took" -ge $((EVAL_SECONDS - 5)) ]
check "no hang was detected during it" [ "$(event_count hang-detected)" -eq 0 ]
check "attempt 1 steps on after it" [ "$(attempt_numbers | tr '\n' ' ')" = "1 " ]

wait_until 60 heartbeat_at_least "$HANG_AT"
job=$(job_of_attempt 1)
"$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" hang-job "$job" >/dev/null 2>&1
hb_file="${HB_DIR:-$STATE/heartbeats}/attempt-1"
last_step_at=$(stat -c %.3Y "$hb_file")  # the tasks are stopped: the heartbeat file keeps its last step's time
wait_until 90 has_event hang-detected
found_at=$(first_event_time hang-detected)
found_after=$(/usr/bin/python3 -c 'import sys; print(f"{float(sys.argv[1]) - float(sys.argv[2]):.1f}")' "${found_at:-1e12}" "$last_step_at")
echo "stopped job $job at step $(heartbeat_of 1); hang-detected ${found_after}s after the last step's heartbeat"
check "the hang was found within 30 s of the last step" at_most "$found_after" 30
check "the hang event says the timeout was calibrated" has_event hang-detected calibrated=true
# The training has no helper: the node dump (on by default) shows each node's stopped rank, gdb's stacks.
dumped_ranks() {
  "$MLSUP" events "$CONF" --json --kind hang-dump | /usr/bin/python3 -c 'import json, sys
for e in map(json.loads, filter(str.strip, sys.stdin)):
    for n in e["dumps"]:
        for p in n["processes"]:
            if p["rank"] != "-" and p["state"] == "T" and p["by"] == "gdb" and p["frames"] > 0 and n["complete"]:
                print(n["node"], p["rank"])'
}
wait_until 30 has_event hang-dump
"$MLSUP" events "$CONF" --kind hang-dump
check "the hang's dump: each node's stopped rank with gdb's stacks" [ "$(dumped_ranks | sort -k2 | awk '{print $2}' | tr '\n' ' ')" = "0 1 " ]
check "the hang's dump: one file per node in the hang folder" [ "$(ls "$STATE/attempts/1/hang" | tr '\n' ' ')" = "node-$(dumped_ranks | sort -k2 | awk 'NR==1{print $1}').txt node-$(dumped_ranks | sort -k2 | awk 'NR==2{print $1}').txt " ]

wait_campaign 180
check "campaign completed" [ "$RC" -eq 0 ]
check "the hang was classed and resubmitted" has_event attempt-ended class=hang action=resubmit
check "two attempts" [ "$(attempt_numbers | tr '\n' ' ')" = "1 2 " ]
check "result equals a failure-free run's" result_is_exact
scenario_done

finish
