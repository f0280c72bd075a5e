#!/usr/bin/env bash
# `mlsup plan` and the disk runway on the live cluster with the test trainer: a campaign whose first
# attempt crashes at step 150 and whose saves take 2 s (one every 40 steps of 0.05 s), its disk runway
# alert set far above any runway. While attempt 2 runs: the supervisor tells disk-runway-short and
# `mlsup check` warns; then, the campaign cancelled, `plan --json`'s measured inputs agree with what
# status shows of the journal and the heartbeats (one failure, the save time status measured, the
# checkpoints' step distance, a running time between the kept time and the elapsed time), its Young/Daly
# interval is sqrt(2 x save x MTBF) of those inputs, and status's checkpoint size is the newest
# checkpoint's bytes. Hard timeout 240 s; prints its wall time (about 90 s).
set -uo pipefail
[ -n "${PLAN_TIMED:-}" ] || PLAN_TIMED=1 exec timeout -k 5 240 bash "$0" "$@"
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"
suite_t0=$(date +%s)

# One value of plan --json by a Python expression over p (and status --json as s).
plan_query() {
  "$MLSUP" plan --json "$CONF" > "$CDIR/plan.json" 2>"$CDIR/plan.err" || { cat "$CDIR/plan.err"; return 1; }
  "$MLSUP" status --json "$CONF" > "$CDIR/status.json" 2>/dev/null
  /usr/bin/python3 -c '
import json, math, sys
p = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
print(eval(sys.argv[3]))' "$CDIR/plan.json" "$CDIR/status.json" "$1"
}
plan_true() { [ "$(plan_query "$1")" = True ]; }

scenario "plan: one crash, 2 s saves every 40 steps -> the runway alert and check's warning while it runs; plan's inputs agree with status"
new_campaign plan "--steps 100000 --step-seconds 0.05 --ckpt-every 40 --slow-save-seconds 2 --fail-at-step 150 --fail-attempts 1" \
"target:
  steps: 100000
disk:
  runway_alert: 100000d"
start_campaign
attempt2_saved() { [ "$(status_query 's.get("attempt") == 2 and s["pace"]["saves_measured"] >= 3')" = True ]; }
wait_until 120 attempt2_saved
wait_until 90 has_event disk-runway-short
check "runway: the supervisor told disk-runway-short (a runway below disk.runway_alert)" has_event disk-runway-short
"$MLSUP" check "$CONF" > "$CDIR/check.out" 2>&1; check_rc=$?
echo "check: exit $check_rc: $(cat "$CDIR/check.out")"
check "runway: mlsup check says WARNING (exit 1) with the runway" \
  sh -c "[ $check_rc -eq 1 ] && grep -q 'runway' '$CDIR/check.out'"
verb cancel "$CONF"
wait_campaign 120
echo "plan: $("$MLSUP" plan "$CONF" 2>&1)"
plan_query 'json.dumps(p["inputs"])'
check "plan: one failure, as status's history says" \
  plan_true 'p["inputs"]["mtbf"]["failures"] == 1 == sum(1 for a in s["history"] if a["class"] == "failed")'
check "plan: the MTBF is the campaign's running time per failure" \
  plan_true 'p["inputs"]["mtbf"]["source"] == "campaign" and p["inputs"]["mtbf"]["seconds"] == p["inputs"]["mtbf"]["exposure"]'
check "plan: its running time lies between status's kept time and elapsed time" \
  plan_true 's["time"]["useful"] <= p["inputs"]["mtbf"]["exposure"] <= s["time"]["elapsed"]'
check "plan: the save time is the one status measured from the heartbeat (the trainer's 2 s saves, within a poll)" \
  plan_true 'p["inputs"]["save_seconds"] == s["pace"]["save_p50"] and 1.5 <= p["inputs"]["save_seconds"] <= 4'
check "plan: the checkpoints are 40 steps apart" plan_true 'p["inputs"]["save_every_steps"] == 40'
check "plan: the Young/Daly interval is sqrt(2 x save x MTBF) of those inputs" \
  plan_true 'math.isclose(p["advised"]["interval"], math.sqrt(2 * p["inputs"]["save_seconds"] * p["inputs"]["mtbf"]["seconds"]), rel_tol=1e-9)'
check "plan: the restart was measured from the failure, within the time status says it lost" \
  plan_true 'p["inputs"]["restart"]["source"] == "campaign" and 0 < p["inputs"]["restart"]["seconds"] <= s["time"]["lost_to_failures"]'
check "plan: goodput now and advised, and the wall time to the target" \
  plan_true '0 < p["goodput"]["current"] <= 1 and 0 < p["goodput"]["advised"] <= 1 and p["to_target"]["current"]["wall"] > 0'
newest_bytes() {
  /usr/bin/python3 -c '
import json, os, sys
s = json.load(open(sys.argv[1]))
root = s["checkpoint"]["path"]
print(sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs))' "$CDIR/status.json"
}
echo "disk: $(plan_query 'json.dumps(s["disk"])'); newest checkpoint: $(newest_bytes) bytes"
check "disk: status's checkpoint size is the newest complete checkpoint's bytes" \
  plan_true "s['disk']['checkpoint_bytes'] == $(newest_bytes)"
check "disk: the checkpoint file system fills (every checkpoint kept) and its runway is short of the alert" \
  plan_true 'any(f["runway"] and f["runway"]["state"] == "filling" and f["runway"]["short"] for f in s["disk"]["file_systems"])'
scenario_done

echo "test_plan: $(( $(date +%s) - suite_t0 ))s"
finish
