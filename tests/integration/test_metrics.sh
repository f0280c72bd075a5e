#!/usr/bin/env bash
# The Prometheus metrics on the live cluster with the test trainer: `mlsup run --metrics-listen` and
# `--metrics-textfile` on a campaign whose first attempt fails once and whose second completes. Scraped
# with curl during the second attempt, the endpoint must agree with `mlsup status --json` (state, attempt,
# step, restarts by class); the textfile at the end must say completed with status's step and attempt;
# `mlsup tick --metrics-textfile` writes the same facts; `promtool check metrics` accepts every exposition
# (a missing promtool is a failure). A bad address is a usage error (exit 2), a port in use exit 1,
# other paths 404.
# Hard timeout 240 s; prints its wall time (about 60 s alone, more beside another suite).
set -uo pipefail
[ -n "${METRICS_TIMED:-}" ] || METRICS_TIMED=1 exec timeout -k 5 240 bash "$0" "$@"
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

RUNNER=
trap '[ -n "$RUNNER" ] && kill "$RUNNER" 2>/dev/null' EXIT

check "promtool is installed (Debian's prometheus package)" sh -c "command -v promtool >/dev/null"
# `promtool check metrics` on a file: silent and 0 when the exposition is valid and lint-clean.
promtool_ok() {
  local said
  said=$(promtool check metrics < "$1" 2>&1); local rc=$?
  [ -n "$said" ] && echo "promtool on $1: $said"
  [ "$rc" -eq 0 ] && [ -z "$said" ]
}
# A free TCP port on loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The value of the one sample named (with its labels) in the exposition file; nothing when absent.
sample() { awk -v head="$2" 'index($0, head " ") == 1 { print substr($0, length(head) + 2) }' "$1"; }
# A sample of the campaign: metric NAME [EXTRA_LABELS].
csample() { sample "$1" "$2{campaign=\"$CNAME\"${3:+,$3}}"; }

scenario "run --metrics-listen and --metrics-textfile: scraped during the run, against status --json"
new_campaign metrics "--steps 100 --step-seconds 0.2 --ckpt-every 10 --fail-at-step 15 --fail-attempts 1"
PORT=$(free_port)
TEXTFILE="$CDIR/textfile/mlsup.prom"
mkdir -p "$CDIR/textfile"
started=$(date +%s)
"$MLSUP" run "$CONF" --metrics-listen "127.0.0.1:$PORT" --metrics-textfile "$TEXTFILE" --metrics-every 1 > "$CDIR/run.out" 2>&1 &
RUNNER=$!
second_attempt_running() {
  [ "$(status_query 's.get("attempt") == 2 and s["state"] == "running" and (s["step"] or 0) >= 20')" = True ]
}
check "the second attempt runs past step 20 within 60 s" wait_until 60 second_attempt_running
# A step rate and a heartbeat age exist once the attempt's heartbeat was seen step a few times.
check "status has a step rate and a heartbeat age within 20 s" wait_until 20 \
  sh -c "[ \"\$('$MLSUP' status '$CONF' --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s.get(\"step_rate\") is not None and s.get(\"heartbeat_age\") is not None)')\" = True ]"
sleep 1.5  # one exposition made since
curl -sS -o "$CDIR/scrape.prom" -w '%{http_code}' "http://127.0.0.1:$PORT/metrics" > "$CDIR/scrape.code"
"$MLSUP" status "$CONF" --json > "$CDIR/status.json"
st() { /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$CDIR/status.json" "$1"; }
echo "scraped: state running=$(csample "$CDIR/scrape.prom" mlsup_campaign_state 'state="running"') attempt=$(csample "$CDIR/scrape.prom" mlsup_campaign_attempt) step=$(csample "$CDIR/scrape.prom" mlsup_campaign_step); status: attempt $(st 's["attempt"]') step $(st 's["step"]')"
check "scrape: 200" [ "$(cat "$CDIR/scrape.code")" = 200 ]
check "scrape: state running is 1, completed 0" \
  [ "$(csample "$CDIR/scrape.prom" mlsup_campaign_state 'state="running"'),$(csample "$CDIR/scrape.prom" mlsup_campaign_state 'state="completed"')" = "1,0" ]
check "scrape: the attempt is status's" [ "$(csample "$CDIR/scrape.prom" mlsup_campaign_attempt)" = "$(st 's["attempt"]')" ]
check "scrape: the step is at least 20 and at most status's, taken after it" \
  /usr/bin/python3 -c 'import sys; m, s = int(sys.argv[1]), int(sys.argv[2]); sys.exit(not 20 <= m <= s)' \
  "$(csample "$CDIR/scrape.prom" mlsup_campaign_step)" "$(st 's["step"]')"
check "scrape: one restart of class failed, as status says ($(st 's["restarts_by_class"]'))" \
  [ "$(csample "$CDIR/scrape.prom" mlsup_campaign_restarts_total 'class="failed"'),$(st 's["restarts_by_class"].get("failed")')" = "1,1" ]
check "scrape: a heartbeat age and a step rate" \
  [ -n "$(csample "$CDIR/scrape.prom" mlsup_campaign_heartbeat_age_seconds)" -a -n "$(csample "$CDIR/scrape.prom" mlsup_campaign_step_rate_steps_per_second)" ]
check "scrape: the supervisor's passes of the campaign are counted" \
  [ "$(csample "$CDIR/scrape.prom" mlsup_campaign_pass_duration_seconds_count)" -gt 0 ]
check "scrape: promtool check metrics" promtool_ok "$CDIR/scrape.prom"
check "another path: 404" [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")" = 404 ]
check "the textfile is written during the run" [ -s "$TEXTFILE" ]
check "no temporary file is left beside it" [ "$(ls "$CDIR/textfile")" = mlsup.prom ]
"$MLSUP" run "$CONF" --metrics-listen "127.0.0.1:$PORT" > "$CDIR/busy.out" 2>&1
busy_rc=$?
echo "a second run on the same port: exit $busy_rc: $(tail -n 1 "$CDIR/busy.out")"
check "a port in use: exit 1, said" sh -c "[ $busy_rc -eq 1 ] && grep -q 'cannot listen' '$CDIR/busy.out'"
wait_campaign 90
RUNNER=
echo "mlsup run took $(( $(date +%s) - started ))s"
check "the campaign completed" [ "$RC" -eq 0 ]
"$MLSUP" status "$CONF" --json > "$CDIR/status.json"
check "textfile at the end: completed" [ "$(csample "$TEXTFILE" mlsup_campaign_state 'state="completed"')" = 1 ]
check "textfile at the end: status's step ($(st 's["step"]')) and attempt" \
  [ "$(csample "$TEXTFILE" mlsup_campaign_step),$(csample "$TEXTFILE" mlsup_campaign_attempt)" = "$(st 's["step"]'),$(st 's["attempt"]')" ]
check "textfile at the end: goodput below 1, time lost above 0" \
  /usr/bin/python3 -c 'import sys; g, l = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (0 < g < 1 and l > 0))' \
  "$(csample "$TEXTFILE" mlsup_campaign_goodput_ratio)" "$(csample "$TEXTFILE" mlsup_campaign_time_lost_seconds)"
check "textfile: promtool check metrics" promtool_ok "$TEXTFILE"
scenario_done

scenario "tick --metrics-textfile, and a bad address"
TICKFILE="$CDIR/textfile/tick.prom"
"$MLSUP" tick "$CONF" --metrics-textfile "$TICKFILE" > "$CDIR/tick.out" 2>&1
check "tick: exit 0" [ $? -eq 0 ]
check "tick's textfile: completed, status's step" \
  [ "$(csample "$TICKFILE" mlsup_campaign_state 'state="completed"'),$(csample "$TICKFILE" mlsup_campaign_step)" = "1,$(st 's["step"]')" ]
check "tick's textfile: promtool check metrics" promtool_ok "$TICKFILE"
"$MLSUP" run "$CONF" --metrics-listen nonsense > "$CDIR/bad.out" 2>&1
bad_rc=$?
echo "--metrics-listen nonsense: exit $bad_rc: $(head -n 1 "$CDIR/bad.out")"
check "a bad address: exit 2 (usage), saying HOST:PORT" sh -c "[ $bad_rc -eq 2 ] && grep -q 'HOST:PORT' '$CDIR/bad.out'"
scenario_done

scenario "the endpoint flooded with few file descriptors left: no busy loop, and it answers again"
new_campaign flood "--steps 300 --step-seconds 0.1 --ckpt-every 50"
PORT=$(free_port)
( ulimit -n 40; exec "$MLSUP" run "$CONF" --metrics-listen "127.0.0.1:$PORT" --metrics-every 1 ) > "$CDIR/run.out" 2>&1 &
RUNNER=$!
check "the endpoint answers" wait_until 30 curl -sf -o /dev/null "http://127.0.0.1:$PORT/metrics"
# 100 idle connections held open for 8 s: more than the supervisor has descriptors left.
python3 -c 'import socket, sys, time
held = []
for _ in range(100):
    s = socket.socket(); s.settimeout(2)
    try: s.connect(("127.0.0.1", int(sys.argv[1]))); held.append(s)
    except OSError: pass
time.sleep(8)' "$PORT" &
flood=$!
sleep 2
fds=$(ls "/proc/$RUNNER/fd" | wc -l)
echo "the supervisor's descriptors 2 s into the flood: $fds of 40"
check "the flood leaves the supervisor descriptors for Slurm and its files: at most 32 of 40 open" [ "$fds" -le 32 ]
cpu() { awk '{ print $14 + $15 }' "/proc/$RUNNER/stat"; }  # user + system, in clock ticks (1/100 s)
before=$(cpu); sleep 4; after=$(cpu)
echo "the supervisor's CPU during 4 s of the flood: $(( after - before )) ticks"
check "no busy loop under the flood: under 0.5 s of CPU in 4 s" [ $(( after - before )) -lt 50 ]
wait "$flood"
check "it answers again once the flood is over" wait_until 15 curl -sf -o /dev/null "http://127.0.0.1:$PORT/metrics"
wait_campaign 180
check "the campaign completed" [ "$RC" -eq 0 ]
[ "$RC" -eq 0 ] || { echo "the end of mlsup run's output:"; tail -n 30 "$CDIR/run.out" | sed 's/^/  | /'; }
scenario_done

finish
