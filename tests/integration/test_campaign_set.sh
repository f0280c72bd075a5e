#!/usr/bin/env bash
# Campaign sets driven by cron on the live cluster: `mlsup tick SET` called again and again starts
# the runs that come after another only once it has completed, every run completes, and a tick in
# which nothing happened prints nothing; a run whose dependency stopped is blocked, and says so.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

scenario "a set of three runs, two after one, ticked every 2 s -> the two start after the first completed, all complete, an idle tick prints nothing"
new_campaign set "--steps 16 --step-seconds 0.25 --ckpt-every 8"
SET="$CDIR/night.yaml"
TICKS="$CDIR/ticks"; mkdir -p "$TICKS"; N=0
cat > "$SET" <<YAML
set: night
max_running: 2
runs:
  - name: first
    config: campaign.yaml
  - name: second
    config: campaign.yaml
    after: [first]
    overrides:
      vars: {script_args: --steps 8 --step-seconds 0.25 --ckpt-every 4}
  - name: third
    config: campaign.yaml
    after: [first]
    priority: 5
YAML
check "set: validate accepts the set and names its three runs" bash -c "'$MLSUP' validate '$SET' | grep -q 'ok: set night, 3 runs'"
tick_until 10 ticked_once
echo "after the first tick: first $(run_state first), second $(run_state second) ($(set_query 'next(x["set"]["gate_reason"] for x in r if x["set"]["run"] == "second")'))"
check "set: the first tick starts first only" [ "$(set_query '[x["set"]["run"] for x in r if x["attempts"] > 0]')" = first ]
check "set: second waits for first, and status --json says why" \
  [ "$(set_query 'next(x["set"]["gate"] + " " + x["set"]["gate_reason"] for x in r if x["set"]["run"] == "second")')" = "waiting after first (running)" ]
check "set: one run of the set by SET:RUN" [ "$("$MLSUP" status --json "$SET:third" | python3 -c 'import json,sys; print(json.load(sys.stdin)["set"]["gate"])')" = waiting ]
t0=$(date +%s)
first_done() { [ "$(run_state first)" = completed ]; }
tick_until 120 first_done
echo "the tick that recorded first's completion (tick $N): second $(run_state second), third $(run_state third)"
check "set: the tick that records first's completion submits second and third in that same tick" \
  [ "$(set_query '[x["set"]["run"] for x in r if x["attempts"] > 0]' | sort | tr '\n' ' ')" = "first second third " ]
"$MLSUP" check "$SET" > "$CDIR/check.out" 2>&1; check_rc=$?
echo "check right after: exit $check_rc: $(head -c 300 "$CDIR/check.out")"
check "set: mlsup check right after that tick is OK (no dependent left waiting on a completed run)" [ "$check_rc" -eq 0 ]
tick_until 150 all_ended 3
echo "$N ticks in $(( $(date +%s) - t0 ))s; states: $(set_query '[x["set"]["run"] + "=" + x["state"] for x in r]' | tr '\n' ' ')"
check "set: every run completed" [ "$(set_query '[x["state"] for x in r if x["state"] == "completed"]' | wc -l)" -eq 3 ]
order=$("$MLSUP" events --json "$SET" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
done = min(e["time"] for e in ev if e.get("event") == "completed" and e.get("campaign") == "first")
starts = [e["time"] for e in ev if e.get("event") == "submitted" and e.get("campaign") in ("second", "third")]
print("ok" if len(starts) == 2 and min(starts) >= done else "first finished %s, the others submitted %s" % (done, starts))')
echo "order of events: $order"
check "set: second and third were submitted only after first completed (events --json)" [ "$order" = ok ]
quiet=0; for f in "$TICKS"/*[0-9]; do [ -s "$f" ] || quiet=$((quiet + 1)); done
echo "ticks that printed nothing: $quiet of $N"
check "set: ticks in which nothing happened printed nothing" [ "$quiet" -ge 1 ]
check "set: the ticks that printed something told decisions (a submission or an end)" \
  bash -c "cat '$TICKS'/*[0-9] | grep -q 'submitted'"
"$MLSUP" tick "$SET" > "$CDIR/idle.out" 2>&1; rc=$?
check "set: a tick after every run completed prints nothing and exits 0" bash -c "[ $rc -eq 0 ] && [ ! -s '$CDIR/idle.out' ]"
printf 'runs:\n  - config: campaign.yaml\n    after: [nobody]\n' > "$CDIR/bad.yaml"
"$MLSUP" tick "$CDIR/bad.yaml" > "$CDIR/bad.out" 2>&1; rc=$?
check "set: a tick of a set with an error prints it with file:line:column and exits 3" \
  bash -c "[ $rc -eq 3 ] && grep -q 'bad.yaml:3:13: after: no run \"nobody\"' '$CDIR/bad.out'"
scenario_done

scenario "the same set under mlsup run, one run at a time -> first, then third (priority 5), then second; run exits 0"
sed 's/^max_running: 2/max_running: 1/; s/^set: night/set: night-run/' "$CDIR/night.yaml" > "$CDIR/one-at-a-time.yaml"
SET="$CDIR/one-at-a-time.yaml"
t0=$(date +%s)
timeout -s KILL 150 "$MLSUP" run "$SET" > "$CDIR/run.out" 2>&1; rc=$?
echo "mlsup run exited $rc after $(( $(date +%s) - t0 ))s: $(tail -n 1 "$CDIR/run.out")"
order=$("$MLSUP" events --json "$SET" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
t = lambda kind, c: min(e["time"] for e in ev if e.get("event") == kind and e.get("campaign") == c)
s, d = {c: t("submitted", c) for c in ("first", "second", "third")}, {c: t("completed", c) for c in ("first", "second", "third")}
print("ok" if s["first"] < d["first"] <= s["third"] < d["third"] <= s["second"] else "submitted %s, completed %s" % (s, d))')
echo "order: $order"
check "run: every run completed, exit 0" bash -c "[ $rc -eq 0 ] && [ \$('$MLSUP' status --json '$SET' | grep -c '\"state\": \"completed\"') -eq 3 ]"
check "run: one at a time, the higher priority first (events --json)" [ "$order" = ok ]
check "run: the waiting runs said why" grep -q "one-at-a-time.yaml:second: waiting: max_running 1 reached" "$CDIR/run.out"
scenario_done

scenario "a dependency that stops -> its dependent is blocked (status and --json say so), and later ticks stay quiet"
new_campaign block "--steps 40 --step-seconds 0.25 --no-retry-at-step 2"
SET="$CDIR/block.yaml"
TICKS="$CDIR/ticks"; mkdir -p "$TICKS"; N=0
printf 'runs:\n  - name: gate\n    config: campaign.yaml\n  - name: later\n    config: campaign.yaml\n    after: [gate]\n' > "$SET"
tick_until 90 all_ended 1
gate="$("$MLSUP" status --json "$SET:later" | python3 -c 'import json,sys; s=json.load(sys.stdin)["set"]; print(s["gate"], s["gate_reason"])')"
echo "gate: $(run_state gate); later: $gate"
check "blocked: the dependency stopped (do-not-retry)" [ "$(run_state gate)" = stopped ]
check "blocked: --json says blocked, naming the dependency and its exit" starts_with "$gate" "blocked after gate, which ended with exit 13"
check "blocked: the status line says so" bash -c "'$MLSUP' status '$SET' | grep -q '^later .*blocked: after gate'"
check "blocked: the run never started" [ "$(set_query 'next(x["attempts"] for x in r if x["set"]["run"] == "later")')" = 0 ]
"$MLSUP" tick "$SET" > "$CDIR/idle.out" 2>&1; rc=$?
echo "a later tick: exit $rc, $(wc -c < "$CDIR/idle.out") bytes printed"
check "blocked: a later tick prints nothing (the stop was told when it happened) and exits with its code, 13" \
  bash -c "[ $rc -eq 13 ] && [ ! -s '$CDIR/idle.out' ]"
scenario_done

scancel -u "$(id -un)" 2>/dev/null
finish
