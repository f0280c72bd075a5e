#!/usr/bin/env bash
# status --json against what was injected, on the live cluster with the test trainer: a node on which
# the trainer crashes (sticky-bad) fails the first attempt and, srun naming it first, is excluded at once;
# the campaign completes on the others. status must say the step the trainer reached, one restart of class
# failed, exactly that node excluded (live, with its reason and expiry), and every attempt's job saw the same MLSUP_CAMPAIGN_ID,
# the one status shows; the alerts chosen (restart, exclusion, completed) are told once each. events
# --kind/--since and --follow are read against the same campaign. status --watch, with no supervisor
# running, refreshes in tmux (its screen captured) and prints a line per change when not a terminal.
# Hard timeout 200 s; prints its wall time (about 80 s).
set -uo pipefail
[ -n "${STATUS_TIMED:-}" ] || STATUS_TIMED=1 exec timeout -k 5 200 bash "$0" "$@"
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

faults=$(mktemp -d /tmp/mlsup-status-faults.XXXXXX)
follow_pid=
watch_session="mlsup-watch-$$"
trap '[ -n "$follow_pid" ] && kill "$follow_pid" 2>/dev/null; tmux kill-session -t "$watch_session" 2>/dev/null; rm -rf "$faults"' EXIT
export MLSUP_FAULT_DIR=$faults  # the trainer crashes on the nodes marked in $faults/sticky-bad

# The partition's nodes in order (Slurm fills the lowest first), one per line.
all_nodes() { sinfo -h -N -o '%N' | sort -uV; }
# One value of status --json by a Python expression over s.
sq() { status_query "$@"; }
# True when the Python expression over status --json is true.
sq_true() { [ "$(status_query "$1")" = True ]; }

scenario "a sticky bad node fails an attempt and is excluded at its first failure -> status --json says so, field by field"
NODE=$(all_nodes | head -1)
mkdir -p "$faults/sticky-bad" && : > "$faults/sticky-bad/$NODE"
STEADY_TIMEOUT=30s new_campaign status "--steps 100 --step-seconds 0.05 --ckpt-every 10" "target:
  steps: 100
notify:
  command: 'echo \"\$MLSUP_ALERT_KIND\" >> alerts.txt'
  on: [restart, exclusion, completed, hang]
  cooldown: 0s"
sed -i 's/^  nodes: 1$/  nodes: 3/' "$CONF"
"$MLSUP" events "$CONF" --follow --json > "$CDIR/follow.out" 2>/dev/null &
follow_pid=$!
started=$(date +%s)
timeout -s KILL 150 "$MLSUP" run "$CONF" > "$CDIR/run.out" 2>&1
RC=$?
echo "mlsup run exited $RC after $(( $(date +%s) - started ))s: $(tail -n 1 "$CDIR/run.out")"
rm -f "$faults/sticky-bad/$NODE"
check "status: campaign completed" [ "$RC" -eq 0 ]
check "status: state completed" [ "$(sq 's["state"]')" = completed ]
check "status: the step is the trainer's last ($(result_field steps))" [ "$(sq 's["step"]')" = "$(result_field steps)" ]
check "status: the step is the target" [ "$(sq 's["step"]')" = 100 ]
check "status: one restart, of class failed" [ "$(sq 's["restarts_by_class"]')" = "{'failed': 1}" ]
check "status: restarts 1" [ "$(sq 's["restarts"]')" = 1 ]
check "status: exactly the sticky node is excluded" [ "$(excluded_nodes)" = "$NODE" ]
check "status: its exclusion is live, with a reason, after attempt 1" \
  [ "$(exclusion_count "node=$NODE" live=true attempt=1 "reason~first failing task")" -eq 1 ]
check "status: its expiry is still to come" \
  sq_true 'all(x["until"] > s["now"] for x in s["exclusions"])'
check "status: the time lost to failures is counted, goodput below 1" \
  sq_true '0 < s["time"]["lost_to_failures"] and 0 < s["time"]["goodput"] < 1'
check "status: the newest checkpoint is step 100" [ "$(sq 's["checkpoint"]["step"]')" = 100 ]
cid=$(sq 's["campaign_id"]')
ids=$(python3 -c 'import json,sys
print(" ".join(sorted({json.loads(l)["campaign_id"] for l in open(sys.argv[1]) if l.strip()})))' "$STATE/trainer-log.jsonl")
attempts=$(python3 -c 'import json,sys
print(len({json.loads(l)["attempt"] for l in open(sys.argv[1]) if l.strip()}))' "$STATE/trainer-log.jsonl")
echo "campaign id in status: $cid; in the trainer's log of $attempts attempts: $ids"
check "status: every attempt's job saw MLSUP_CAMPAIGN_ID = status's campaign id" [ -n "$cid" -a "$ids" = "$cid" ]
check "status: two attempts ran" [ "$attempts" -eq 2 ]
check "status: the text view says the restarts by class" sh -c "'$MLSUP' status '$CONF' | grep -qx 'restarts: 1 (failed 1)'"
hist() { "$MLSUP" status "$CONF" --json --history "$1" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["attempts"], [a["number"] for a in s["history"]], s["history_earlier"])'; }
check "status --history 1: the newest attempt, the other counted" [ "$(hist 1)" = "2 [2] 1" ]
check "status --history all: both attempts" [ "$(hist all)" = "2 [1, 2] 0" ]
check "status --history 0: wrong use (2)" sh -c "'$MLSUP' status '$CONF' --history 0 >/dev/null 2>&1; [ \$? -eq 2 ]"
check "status --history 1, the text: the earlier attempt counted, the newest listed" \
  sh -c "'$MLSUP' status '$CONF' --history 1 | grep -A2 '^history:' | tr -s ' ' | grep -qz '(1 earlier attempt: status --history all)'"
echo "alerts told: $(tr '\n' ' ' < "$CDIR/alerts.txt" 2>/dev/null)"
check "alerts: the exclusion, the restart and the completion were told, in that order, each once" \
  [ "$(tr '\n' ' ' < "$CDIR/alerts.txt" 2>/dev/null)" = "exclusion restart completed " ]
check "alerts: the event log says each was sent" \
  [ "$("$MLSUP" events "$CONF" --json --kind notified | grep -c '"outcome":"command: sent"')" -eq 3 ]
scenario_done

scenario "events: --kind, --since and --follow against the same campaign"
check "events --kind attempt-ended: two endings" [ "$("$MLSUP" events "$CONF" --json --kind attempt-ended | wc -l)" -eq 2 ]
# The kinds of the events on stdin, sorted, on one line.
kinds_of() { /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted({json.loads(l)["event"] for l in sys.stdin if l.strip()})))'; }
check "events --kind a,b: endings and exclusions, nothing else" \
  [ "$("$MLSUP" events "$CONF" --json --kind attempt-ended,excluded | kinds_of)" = "attempt-ended excluded" ]
check "events --kind a --kind b: the same" \
  [ "$("$MLSUP" events "$CONF" --json --kind attempt-ended --kind excluded | wc -l)" -eq 3 ]
check "events --since 1d: every event" [ "$("$MLSUP" events "$CONF" --json --since 1d | wc -l)" -eq "$("$MLSUP" events "$CONF" --json | wc -l)" ]
check "events --since a time to come: none" [ "$("$MLSUP" events "$CONF" --json --since "@$(( $(date +%s) + 3600 ))" | wc -l)" -eq 0 ]
check "events --since nonsense: wrong use (2)" sh -c "'$MLSUP' events '$CONF' --since yesterday 2>/dev/null; [ \$? -eq 2 ]"
wait_until 5 sh -c "[ \"\$(wc -l < '$CDIR/follow.out')\" -eq \"\$('$MLSUP' events '$CONF' --json | wc -l)\" ]"
check "events --follow, started before the campaign's first event, printed every event as it came" \
  cmp -s "$CDIR/follow.out" <("$MLSUP" events "$CONF" --json)
kill "$follow_pid" 2>/dev/null; wait "$follow_pid" 2>/dev/null; follow_pid=
scenario_done

scenario "status --watch with no supervisor running: live heartbeat step and Slurm's job state, refreshed in place (tmux)"
rm -f "$faults/sticky-bad/"*
new_campaign watch "--steps 600 --step-seconds 0.1 --ckpt-every 100"
"$MLSUP" tick "$CONF" > "$CDIR/tick.out" 2>&1
job=$(job_of_attempt 1)
check "watch: one tick submitted the job, and no supervisor holds the campaign" bash -c "[ -n '$job' ] && [ \"\$('$MLSUP' status '$CONF' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"supervisor\"])')\" = None ]"
wait_until 60 heartbeat_at_least 20
tmux new-session -d -s "$watch_session" -x 200 -y 50 "'$MLSUP' status --watch '$CONF'"
sleep 6
first=$(tmux capture-pane -p -t "$watch_session")
sleep 3
second=$(tmux capture-pane -p -t "$watch_session")
echo "$second" | grep -E 'mlsup status --watch|live:' | sed 's/^/  screen: /'
step_on() { grep -o 'live: step [0-9]*' <<<"$1" | grep -o '[0-9]*$'; }
check "watch: the screen has the header and the campaign's status" bash -c "grep -q 'mlsup status --watch' <<<\"\$0\" && grep -q '^state: running' <<<\"\$0\"" "$second"
check "watch: the live line reads the heartbeat file and Slurm's job state" grep -qE "live: step [0-9]+ written .* ago \(1 heartbeat file\); Slurm: job $job RUNNING on " <<<"$second"
check "watch: refreshed in place, the step moving on with no supervisor ($(step_on "$first") -> $(step_on "$second"))" \
  bash -c "[ $(step_on "$first" || echo 0) -gt 0 ] && [ $(step_on "$second" || echo 0) -gt $(step_on "$first" || echo 0) ] && [ \$(grep -c 'mlsup status --watch' <<<\"\$0\") -eq 1 ]" "$second"
tmux send-keys -t "$watch_session" C-c
wait_until 5 bash -c "! tmux has-session -t '$watch_session' 2>/dev/null"
check "watch: Ctrl-C ends it" bash -c "! tmux has-session -t '$watch_session' 2>/dev/null"
timeout --preserve-status -s INT 4 "$MLSUP" status --watch "$CONF" > "$CDIR/plain.out" 2>&1; rc=$?
head -3 "$CDIR/plain.out" | sed 's/^/  plain: /'
check "watch, not a terminal: plain lines, each with its time, no escape codes, exit 0 on SIGINT" \
  bash -c "[ $rc -eq 0 ] && grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2} state: running' '$CDIR/plain.out' && ! grep -q \$'\\x1b' '$CDIR/plain.out'"
sq_now() { "$MLSUP" status --json "$CONF" | /usr/bin/python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"; }
echo "status with no supervisor: $(sq_now '[s["job_state"], s["nodes"], s["job_seen"], s["step"], s["step_source"]]')"
check "status, no supervisor: the job's state is Slurm's, asked now (not the tick's view)" \
  [ "$(sq_now 's["job_seen"]["source"] + " " + s["job_state"] + " " + str(bool(s["nodes"]))')" = "slurm RUNNING True" ]
check "status, no supervisor: the step is read from the heartbeat file, ahead of what the tick saw" \
  [ "$(sq_now 's["step_source"] + " " + str(s["step"] >= 20)')" = "heartbeat True" ]
check "status, no supervisor: the text says where the job's state comes from" \
  grep -qE "^attempt: 1, job $job RUNNING on .* \(Slurm, asked now\)$" <<<"$("$MLSUP" status "$CONF")"
scancel "$job"
wait_until 20 bash -c "[ \"\$(scontrol -o show job $job 2>/dev/null | grep -o 'JobState=[A-Z]*')\" = JobState=CANCELLED ]"
check "status, no supervisor: a job cancelled since the last tick shows CANCELLED at once" \
  [ "$(sq_now 's["job_seen"]["source"] + " " + s["job_state"]')" = "slurm CANCELLED" ]
scenario_done

finish
