#!/usr/bin/env bash
# A night with a window on the live cluster: a set of three runs (two after one; the first fails once
# and recovers) ticked every 2 s as cron would, in a window (UTC) that closes for one minute while the
# first runs and then opens again. At the close the first saves and exits (at_end: pause) and nothing
# starts while the window is closed (Slurm's own start and end times of every job); `mlsup check` is OK
# then, status says closed; the opening carries the first on from its checkpoint with no budget spent,
# then the other two run. Every run ends with the result of an uninterrupted run, a tick in which
# nothing happened prints nothing, and `mlsup report` for the night says what the events say.
# Hard timeout 330 s; prints its wall time (about 160 s: the window closes 30-90 s after the start).
set -uo pipefail
[ -n "${WINDOW_TIMED:-}" ] || WINDOW_TIMED=1 exec timeout -k 5 330 bash "$0" "$@"
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"
FACTS="/usr/bin/python3 $(dirname "$0")/report_facts.py"

hhmm() { date -u -d "@$1" +%H:%M; }
# A job's start and end as Slurm tells them (unix seconds; end 0 while it runs): job_times ID
job_times() {
  scontrol -o show job "$1" 2>/dev/null | /usr/bin/python3 -c 'import re, sys, time
t = sys.stdin.read()
def at(key):
    m = re.search(key + r"=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)", t)
    return int(time.mktime(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))) if m else 0
print(at("StartTime"), at("EndTime"))'
}

scenario "a set of three runs in a window that closes for a minute mid-run -> saved at the close, nothing runs while closed, carried on at the opening"
new_campaign window "--steps 20 --step-seconds 0.1 --ckpt-every 10"
SET="$CDIR/night.yaml"
TICKS="$CDIR/ticks"; mkdir -p "$TICKS"; N=0
# The closed minute [CLOSE, OPEN): the next whole minute at least 30 s away. The window runs from OPEN
# to CLOSE the next day (across midnight), so it is open now.
now=$(date +%s)
CLOSE=$(( (now / 60 + 1) * 60 )); [ $((CLOSE - now)) -ge 30 ] || CLOSE=$((CLOSE + 60))
OPEN=$((CLOSE + 60))
STEPS=$(( (CLOSE - now + 20) * 5 ))  # uninterrupted, the first would end about 20 s after the close
cat > "$SET" <<YAML
set: night
max_running: 2
window: {hours: "$(hhmm $OPEN)-$(hhmm $CLOSE)", zone: UTC}
runs:
  - name: first
    config: campaign.yaml
    overrides:
      vars: {script_args: --steps $STEPS --step-seconds 0.2 --ckpt-every 10 --fail-at-step 15 --fail-attempts 1}
  - name: second
    config: campaign.yaml
    after: [first]
  - name: third
    config: campaign.yaml
    after: [first]
YAML
echo "window $(hhmm $OPEN)-$(hhmm $CLOSE) UTC: closed in $((CLOSE - now)) s for 60 s; first runs $STEPS steps"
closed_now() { [ "$(date +%s)" -ge $((CLOSE + 20)) ]; }
tick_until $((CLOSE - now + 40)) closed_now
"$MLSUP" status --json "$SET:first" > "$CDIR/closed-status.json" 2>/dev/null
"$MLSUP" check "$SET" > "$CDIR/check.out" 2>&1; check_rc=$?
echo "20 s into the closed minute: first $(run_state first); check: $(cat "$CDIR/check.out") (exit $check_rc)"
check "window: status says the window is closed until the opening" /usr/bin/python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))["window"]
sys.exit(0 if w["open"] is False and w["until"] == int(sys.argv[2]) else 1)' "$CDIR/closed-status.json" "$OPEN"
check "window: mlsup check is OK while the window holds the set back (exit 0)" [ "$check_rc" -eq 0 ]
opened() { [ "$(date +%s)" -ge "$OPEN" ]; }
tick_until 60 opened
t0=$(date +%s)
tick_until 150 all_ended 3
echo "$N ticks; done $(( $(date +%s) - OPEN ))s after the opening; states: $(set_query '[x["set"]["run"] + "=" + x["state"] for x in r]' | tr '\n' ' ')"
check "window: every run completed" [ "$(set_query '[x["state"] for x in r if x["state"] == "completed"]' | wc -l)" -eq 3 ]
for run in first second third; do
  STATE="$CDIR/.mlsup/night/$run"
  check "window: $run's result equals an uninterrupted run's" result_is_exact
done
CONF="$SET:first"
check "window: first failed once, was saved at the close and carried on (3 attempts: failed, kill_switch, completed)" \
  [ "$(status_query '[a["class"] for a in s["history"]]' | tr '\n' ' ')" = "failed kill_switch completed " ]
check "window: its closing and its opening were told (window-closed, window-opened)" \
  bash -c "[ \$('$MLSUP' events --json '$SET:first' | grep -c '\"event\":\"window-closed\"') -eq 1 ] &&
           [ \$('$MLSUP' events --json '$SET:first' | grep -c '\"event\":\"window-opened\"') -eq 1 ]"
check "window: the switch set at the close was removed at the opening" has_event kill-switch-cleared removed=true
check "window: the pause is a kill_switch restart, which no budget counts; the failure is the one failed restart" \
  [ "$(status_query 'sorted(s["restarts_by_class"].items())' | tr '\n' ' ')" = "('failed', 1) ('kill_switch', 1) " ]
# Slurm's own times: no job started while the window was closed, and the one running at the close ended
# within 15 s of it (a tick every 2 s sets the switch; the training saves and exits within a step).
outside=""
for run in first second third; do
  CONF="$SET:$run"
  for id in $(attempt_jobs); do
    read -r start end <<< "$(job_times "$id")"
    echo "  $run job $id: start $((start - CLOSE)) s, end $((end - CLOSE)) s after the close"
    if [ "$start" -ge "$CLOSE" ] && [ "$start" -lt "$OPEN" ]; then outside+=" $id started while closed;"; fi
    if [ "$start" -lt "$CLOSE" ] && [ "$end" -gt $((CLOSE + 15)) ]; then outside+=" $id ran on past the close;"; fi
  done
done
check "window: nothing ran outside the window (Slurm's start and end times)${outside}" [ -z "$outside" ]
quiet=0; for f in "$TICKS"/*[0-9]; do [ -s "$f" ] || quiet=$((quiet + 1)); done
echo "ticks that printed nothing: $quiet of $N"
check "window: ticks in which nothing happened printed nothing" [ "$quiet" -ge 1 ]
"$MLSUP" events --json "$SET" > "$CDIR/events.jsonl" 2>/dev/null
"$MLSUP" status --json "$SET" > "$CDIR/status.json" 2>/dev/null
out="$CDIR/morning"
"$MLSUP" report "$SET" --since 1h --out "$out" > /dev/null 2> "$CDIR/report.err"; rc=$?
check "window: the report of the night is written (report.html, report.md, report.svg)" \
  bash -c "[ $rc -eq 0 ] && [ -s '$out/report.html' ] && [ -s '$out/report.md' ] && [ -s '$out/report.svg' ]"
for what in attempts jobs endings steps svg html; do
  said=$($FACTS "$what" "$out" "$CDIR/events.jsonl" "$CDIR/status.json" 2>&1); ok=$?
  echo "  $said"
  check "window: the report's $what match the events" [ "$ok" -eq 0 ]
done
scenario_done

scancel -u "$(id -un)" 2>/dev/null
finish
