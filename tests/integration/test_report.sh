#!/usr/bin/env bash
# The morning report on the live cluster: a set of two runs, one failing once (rank 1 exits at step 6 in its
# first attempt; srun names its node, which the first-evidence rule excludes) and recovering, the other clean,
# supervised by `mlsup run SET`; then `mlsup report SET` writes report.html, report.md and report.svg, and
# their facts (the Markdown's tables, the SVG's data attributes, the page's inline SVG) must match the event log
# (`mlsup events --json`: attempts, jobs, endings, steps, exclusions) and status (goodput); --notify sends the
# report in one line through the channel the runs name, once. A window after the night shows no attempt; a
# --since it cannot read is wrong use (2).
# Hard timeout 150 s; prints its wall time (about 25 s).
set -uo pipefail
[ -n "${REPORT_TIMED:-}" ] || REPORT_TIMED=1 exec timeout -k 5 150 bash "$0" "$@"
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"
FACTS="/usr/bin/python3 $(dirname "$0")/report_facts.py"

scenario "a set with one failure and its recovery -> report.md, report.svg and report.html say what the events say"
new_campaign report "--steps 8 --step-seconds 0.25 --ckpt-every 4" "notify:
  command: 'echo \"\$MLSUP_ALERT_KIND \$MLSUP_EVENT_REASON\" >> notified.txt'
  on: [trouble]"
SET="$CDIR/night.yaml"
cat > "$SET" <<YAML
set: night
runs:
  - name: flaky
    config: campaign.yaml
    overrides:
      vars: {script_args: --steps 12 --step-seconds 0.25 --ckpt-every 4 --fail-at-step 6 --fail-attempts 1 --fault-ranks 1}
      slurm: {nodes: 2}
  - name: clean
    config: campaign.yaml
YAML
t0=$(date +%s)
timeout -s KILL 100 "$MLSUP" run "$SET" > "$CDIR/run.out" 2>&1; rc=$?
echo "mlsup run exited $rc after $(( $(date +%s) - t0 ))s: $(tail -n 1 "$CDIR/run.out")"
check "report: both runs completed (exit 0)" [ "$rc" -eq 0 ]
"$MLSUP" events --json "$SET" > "$CDIR/events.jsonl" 2>/dev/null
"$MLSUP" status --json "$SET" > "$CDIR/status.json" 2>/dev/null
out="$CDIR/morning"
( cd "$CDIR" && "$MLSUP" report "$SET" --since 1h --out "$out" --json > "$CDIR/report.json" 2> "$CDIR/report.err" ); rc=$?
echo "mlsup report exited $rc: $(ls "$out" 2>/dev/null | tr '\n' ' ')"
check "report: exits 0 and writes report.html, report.md and report.svg" \
  bash -c "[ $rc -eq 0 ] && [ -s '$out/report.html' ] && [ -s '$out/report.md' ] && [ -s '$out/report.svg' ]"
sed -n '/^## Attempts/,/^## Exclusions/p' "$out/report.md"
for what in attempts jobs endings steps svg failures exclusions html goodput; do
  said=$($FACTS "$what" "$out" "$CDIR/events.jsonl" "$CDIR/status.json" 2>&1); ok=$?
  echo "  $said"
  check "report: $what match the events (report.md's tables, report.svg's data attributes)" [ "$ok" -eq 0 ]
done
check "report: --json holds the same runs, flaky with one failure and time lost to it" /usr/bin/python3 -c '
import json, sys
r = {x["run"]: x for x in json.load(open(sys.argv[1]))["runs"]}
f = r["flaky"]
sys.exit(0 if sorted(r) == ["clean", "flaky"] and f["failures"] == 1 and f["lost_to_failures"] > 0
         and [a["ending"] for a in f["attempts"]] == ["failed", "completed"] and f["steps_gained"] == 12 else 1)' "$CDIR/report.json"
"$MLSUP" report "$SET" --since 1h --out "$CDIR/notify" --notify > /dev/null 2> "$CDIR/notify.err"; rc=$?
echo "report --notify exited $rc: $(cat "$CDIR/notify.err")"; echo "notified: $(cat "$CDIR/notified.txt" 2>/dev/null)"
check "report: --notify sends the report in one line, once through the channel both runs name" \
  bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^report 20[0-9-]*T' '$CDIR/notified.txt') -eq 1 ] &&
           grep -q 'flaky completed (2 attempts, 1 failure, 12 steps gained, .* s lost, goodput' '$CDIR/notified.txt'"
scenario_done

scenario "a window after the night, and a --since that is not a time"
sleep 2
"$MLSUP" report "$SET" --since 1s --out "$CDIR/later" > /dev/null 2>&1; rc=$?
check "report: a window after the campaigns ended shows no attempt, still with its tables" \
  bash -c "[ $rc -eq 0 ] && [ \$(sed -n '/^## Attempts/,/^## Exclusions/p' '$CDIR/later/report.md' | grep -c '^|') -eq 2 ]"
"$MLSUP" report "$SET" --since yesterday-ish --out "$CDIR/bad" > "$CDIR/bad.out" 2>&1; rc=$?
check "report: an unreadable --since is wrong use (2), said on stderr" bash -c "[ $rc -eq 2 ] && grep -q since '$CDIR/bad.out'"
scenario_done

scancel -u "$(id -un)" 2>/dev/null
finish
