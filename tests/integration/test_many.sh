#!/usr/bin/env bash
# Many campaigns under one supervisor on the live cluster: one Slurm job query per pass whatever their
# number (sdiag), a broken config and a campaign another supervisor holds reported while the rest
# complete, and one campaign's hanging sbatch not delaying another's resubmission.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

sbatch_shim

# The field of `mlsup status --json` for the config at $1.
status_of() { "$MLSUP" status --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1]))' "$2"; }

# Writes a campaign's config into the folder $FLEET as $FLEET/<file>.yaml: fleet_campaign FILE "ARGS" [extra YAML].
fleet_campaign() {
  new_campaign "$1" "$2" "${3:-}"
  mv "$CONF" "$FLEET/$1.yaml"
  rmdir "$CDIR" 2>/dev/null
  NAMES[$1]=$CNAME
}
declare -A NAMES

scenario "18 campaigns, a broken config and a campaign another supervisor holds, in one folder under one mlsup run -> one job query per pass, the 18 complete, the two reported"
FLEET=$(mktemp -d /tmp/mlsup-e2e-fleet.XXXXXX)
for i in $(seq -w 1 18); do fleet_campaign "c$i" "--steps 80 --step-seconds 0.3 --ckpt-every 40"; done
printf 'name: broken\ntemplate: %s/templates/srun.sbatch.tmpl\npoll_intervall: 1s\n' "$REPO" > "$FLEET/broken.yaml"
fleet_campaign held "--steps 1500 --step-seconds 0.2"
"$MLSUP" run "$FLEET/held.yaml" > "$FLEET/held.out" 2>&1 &
OTHER=$!
wait_until 20 test -f "$FLEET/.mlsup/${NAMES[held]}/lease.json"
t0=$(date +%s)
"$MLSUP" run --submit-rate 2 "$FLEET" > "$FLEET/run.out" 2>&1 &
RUNNER=$!
# A quiet window: every job submitted (the last after 7 s: a burst of 4, then 2/s) and none ended
# yet (each trains for 24 s or more). Meanwhile the supervisor's threads: a submission waiting for
# its turn holds none (before, each held a pool thread: 18 and more).
peak_threads=0
for _ in $(seq 1 45); do
  t=$(awk '$1 == "Threads:" { print $2 }' "/proc/$RUNNER/status" 2>/dev/null)
  [ "${t:-0}" -gt "$peak_threads" ] && peak_threads=$t
  sleep 0.2
done
echo "the supervisor's threads while the 18 submissions waited their turns: at most $peak_threads"
q0=$(sdiag_count REQUEST_JOB_USER_INFO); w0=$(date +%s.%N)
sleep 8
q1=$(sdiag_count REQUEST_JOB_USER_INFO); w1=$(date +%s.%N)
per_second=$(python3 -c "print(round(($q1 - $q0) / ($w1 - $w0), 2))")
echo "job queries in the quiet window: $((q1 - q0)) in $(python3 -c "print(round($w1 - $w0, 1))") s = $per_second/s (two supervisors polling every 1 s; one query per campaign per poll would be 19/s)"
timeout 300 tail --pid="$RUNNER" -f /dev/null || kill -9 "$RUNNER"
wait "$RUNNER"; RC=$?
echo "mlsup run exited $RC after $(( $(date +%s) - t0 ))s; last lines:"; tail -n 4 "$FLEET/run.out"
check "fleet: job queries do not grow with the campaigns (at most 2.5/s for two supervisors)" python3 -c "import sys; sys.exit(0 if $per_second <= 2.5 else 1)"
completed=0
for i in $(seq -w 1 18); do [ "$(status_of "$FLEET/c$i.yaml" state)" = completed ] && completed=$((completed + 1)); done
check "fleet: the 18 campaigns completed" [ "$completed" -eq 18 ]
check "fleet: the broken config is reported with file:line" grep -q "broken.yaml:3:1" "$FLEET/run.out"
check "fleet: the held campaign is reported as held by another supervisor" grep -q "held.yaml: waiting" "$FLEET/run.out"
check "fleet: exit 3, the most severe (a broken config outweighs a held campaign)" [ "$RC" -eq 3 ]
check "fleet: the other supervisor still runs its campaign" kill -0 "$OTHER"
check "fleet: console lines carry the campaign's name" grep -q "\[${NAMES[c01]}\] submitted" "$FLEET/run.out"
spread=$("$MLSUP" events --json "$FLEET" 2>/dev/null | /usr/bin/python3 -c '
import json, sys
times = [e["time"] for e in map(json.loads, sys.stdin) if e.get("event") == "submitted" and e.get("attempt") == 1 and e["campaign"].startswith("c")]
print(round(max(times) - min(times), 2) if len(times) == 18 else -1)')
echo "the 18 first submissions spread over ${spread}s (a burst of 4, then 2/s: 7 s between the first and the last sbatch call)"
check "fleet: sbatch calls spaced out by --submit-rate" /usr/bin/python3 -c "import sys; sys.exit(0 if $spread >= 5 else 1)"
check "fleet: no thread waits for a submission's turn (at most 8 threads while 14 waited)" [ "$peak_threads" -le 8 ]
kill -TERM "$OTHER"; wait "$OTHER"
scancel --name="${NAMES[held]}" 2>/dev/null; scancel -u "$(id -un)" 2>/dev/null
scenario_done

scenario "one campaign's sbatch hangs 60 s -> another campaign of the same supervisor fails, is resubmitted and completes meanwhile"
FLEET=$(mktemp -d /tmp/mlsup-e2e-fleet.XXXXXX)
fleet_campaign slow "--steps 10 --step-seconds 0.1"
fleet_campaign quick "--steps 40 --step-seconds 0.1 --ckpt-every 10 --fail-at-step 25 --fail-attempts 1"
make_sbatch_wrapper "case \"\$*\" in *mlsup:${NAMES[slow]}:*) sleep 60;; esac" ""
t0=$(date +%s)
PATH="$shim/bin:$PATH" "$MLSUP" run "$FLEET/slow.yaml" "$FLEET/quick.yaml" > "$FLEET/run.out" 2>&1 &
RUNNER=$!
quick_completed() { [ "$(status_of "$FLEET/quick.yaml" state)" = completed ]; }
wait_until 50 quick_completed
quick_done=$(( $(date +%s) - t0 ))
slow_attempts=$(status_of "$FLEET/slow.yaml" job_id)
echo "quick completed after ${quick_done}s; slow's job id then: $slow_attempts"
check "hanging sbatch: the other campaign completed within 50 s" [ "$quick_done" -lt 50 ]
check "hanging sbatch: it was resubmitted once (attempts 2)" [ "$(status_of "$FLEET/quick.yaml" attempts)" = 2 ]
check "hanging sbatch: the slow campaign's sbatch was still under way" [ "$slow_attempts" = None ]
timeout 200 tail --pid="$RUNNER" -f /dev/null || kill -9 "$RUNNER"
wait "$RUNNER"; RC=$?
echo "mlsup run exited $RC after $(( $(date +%s) - t0 ))s: $(tail -n 1 "$FLEET/run.out")"
check "hanging sbatch: both campaigns completed in the end (exit 0)" [ "$RC" -eq 0 ]
scenario_done

scenario "SIGHUP with a config added to the folder, one removed and one renamed -> the new campaign joins, the removed one is let go with its job running, the rename is refused"
FLEET=$(mktemp -d /tmp/mlsup-e2e-fleet.XXXXXX)
fleet_campaign stays "--steps 150 --step-seconds 0.1 --ckpt-every 50"
fleet_campaign leaves "--steps 600 --step-seconds 0.1"
"$MLSUP" run "$FLEET" > "$FLEET/run.out" 2>&1 &
RUNNER=$!
left_running() { [ "$(status_of "$FLEET/leaves.yaml" job_id)" != None ] && [ "$(job_state "$(status_of "$FLEET/leaves.yaml" job_id)")" = RUNNING ]; }
wait_until 60 left_running
mv "$FLEET/leaves.yaml" "$FLEET/leaves.yaml.off"
fleet_campaign joins "--steps 30 --step-seconds 0.1"
stays_name=${NAMES[stays]}
sed -i "s/^name: .*/name: renamed-on-hup/" "$FLEET/stays.yaml"
kill -HUP "$RUNNER"
joined() { [ "$(status_of "$FLEET/joins.yaml" state)" = completed ]; }
wait_until 90 joined
check "SIGHUP: the new campaign joined and completed" joined
check "SIGHUP: the removed campaign's lease is released" [ "$(status_of "$FLEET/leaves.yaml.off" supervisor)" = None ]
check "SIGHUP: its job goes on" [ "$(job_state "$(status_of "$FLEET/leaves.yaml.off" job_id)")" = RUNNING ]
check "SIGHUP: told on the console" grep -q "leaves.yaml is no longer named: let go" "$FLEET/run.out"
check "SIGHUP: a live campaign's new name is refused, the config in use kept" grep -qE "stays.yaml: name[a-z_., ]* changed: a live campaign keeps its name" "$FLEET/run.out"
sed -i "s/^name: .*/name: $stays_name/" "$FLEET/stays.yaml"
timeout 120 tail --pid="$RUNNER" -f /dev/null || kill -9 "$RUNNER"
wait "$RUNNER"; RC=$?
echo "mlsup run exited $RC: $(tail -n 1 "$FLEET/run.out")"
check "SIGHUP: run ends when the campaigns it still supervises completed (exit 0)" [ "$RC" -eq 0 ]
scancel "$(status_of "$FLEET/leaves.yaml.off" job_id)" 2>/dev/null
scenario_done

scenario "SIGTERM while a pass waits on sbatch, which then refuses the job -> run waits for that pass and reports its stop (exit 14), not a detach"
FLEET=$(mktemp -d /tmp/mlsup-e2e-fleet.XXXXXX)
fleet_campaign refused "--steps 20 --step-seconds 0.1"
make_sbatch_wrapper "case \"\$*\" in *mlsup:${NAMES[refused]}:*) sleep 8; echo 'sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified' >&2; exit 1;; esac" ""
PATH="$shim/bin:$PATH" "$MLSUP" run "$FLEET/refused.yaml" > "$FLEET/run.out" 2>&1 &
RUNNER=$!
sleep 3  # its first pass is in sbatch now
kill -TERM "$RUNNER"
t0=$(date +%s)
timeout 60 tail --pid="$RUNNER" -f /dev/null || kill -9 "$RUNNER"
wait "$RUNNER"; RC=$?
echo "mlsup run exited $RC $(( $(date +%s) - t0 ))s after SIGTERM: $(tail -n 1 "$FLEET/run.out")"
check "SIGTERM: told that it waits for the pass under way" grep -q "SIGTERM: waiting for 1 campaign pass" "$FLEET/run.out"
check "SIGTERM: the pass's own end is reported: exit 14 (Slurm refused the job)" [ "$RC" -eq 14 ]
check "SIGTERM: the campaign's state says stopped" [ "$(status_of "$FLEET/refused.yaml" state)" = stopped ]
scenario_done

scenario "poll_interval 30s: an ending is taken when its script's end record lands, not at the next poll -> two crashes, each seen within 5 s of its record"
new_campaign quick "--steps 40 --step-seconds 0.1 --ckpt-every 10 --fail-at-step 15 --fail-attempts 1,2"
sed -i 's/^poll_interval: 1s$/poll_interval: 30s/' "$CONF"
start_campaign
wait_campaign 240
check "quick: the campaign completed" [ "$RC" -eq 0 ]
# For each failed attempt: its attempt-ended event's time less its end record's write time.
seen=$("$MLSUP" events "$CONF" --json | /usr/bin/python3 -c 'import json, os, sys
for e in map(json.loads, filter(str.strip, sys.stdin)):
    if e["event"] == "attempt-ended" and e.get("class") == "failed":
        print("%.2f" % (e["time"] - os.stat(os.path.join(sys.argv[1], "ends", str(e["job_id"]))).st_mtime))' "$STATE")
echo "each failed attempt's end seen after its end record (s): $(echo $seen)"
check "quick: two failed attempts, each seen within 5 s of its end record (the pace alone: up to 30 s)" \
  /usr/bin/python3 -c 'import sys; v = [float(x) for x in sys.argv[1:]]; sys.exit(not (len(v) == 2 and max(v) < 5))' $seen
scenario_done

scenario "running_poll_interval 6s: a running job whose heartbeat steps is asked of Slurm every 6 s, not every 1 s poll; its ending is still taken when its end record lands"
new_campaign calm "--steps 400 --step-seconds 0.1 --ckpt-every 200" "running_poll_interval: 6s"
# The textfile every second (by default every 10 s: a 12 s window read from it spans 10 s or 20 s).
"$MLSUP" run "$CONF" --metrics-textfile "$CDIR/metrics.prom" --metrics-every 1 > "$CDIR/run.out" 2>&1 &
RUNNER=$!
queries() { awk '$1 == "mlsup_slurm_queries_total" { print $2 }' "$CDIR/metrics.prom"; }
wait_until 90 heartbeat_at_least 30 || abort_suite "calm: the training did not reach step 30 in 90 s"
sleep 2  # the steps' pace measured: the quiet pace begins
q0=$(queries); sleep 12; q1=$(queries)
echo "job queries over 12 s of steady running: $(( ${q1%.*} - ${q0%.*} ))"
check "calm: at most 5 job queries in 12 s of steady running (two, and one per save it looked at; every poll: 12)" [ $(( ${q1%.*} - ${q0%.*} )) -le 5 ]
wait_campaign 120
check "calm: the campaign completed" [ "$RC" -eq 0 ]
seen=$("$MLSUP" events "$CONF" --json | /usr/bin/python3 -c 'import json, os, sys
for e in map(json.loads, filter(str.strip, sys.stdin)):
    if e["event"] == "attempt-ended":
        print("%.2f" % (e["time"] - os.stat(os.path.join(sys.argv[1], "ends", str(e["job_id"]))).st_mtime))' "$STATE")
echo "the ending seen after its end record (s): $seen"
check "calm: one ending, seen within 2 s of its end record (the quiet pace alone: up to 6 s)" \
  /usr/bin/python3 -c 'import sys; v = [float(x) for x in sys.argv[1:]]; sys.exit(not (len(v) == 1 and v[0] < 2))' $seen
scenario_done

scenario "the benchmark, short: 5 idle campaigns with 300-record journals, a 5 s window -> one job query per pass, nothing written; a tick over them"
bench=$(MLSUP="$MLSUP" timeout 300 "$REPO/benchmarks/many-campaigns.sh" --counts 5 --records 300 --window 5 --quick 2>&1)
echo "$bench" | tail -n 5
row=$(echo "$bench" | grep -E '^5 +300 ' | tail -n 1)
tick=$(echo "$bench" | sed -n '/^tick over/,$p' | grep -E '^5 +[0-9.]+ ' | tail -n 1)
check "benchmark: at most 1.5 job queries per pass" /usr/bin/python3 -c "import sys; sys.exit(0 if float('$(echo "$row" | awk '{print $3}')') <= 1.5 else 1)"
check "benchmark: idle passes wrote no file" [ "$(echo "$row" | awk '{print $8}')" = 0 ]
check "benchmark: Slurm's RPCs of every type in the window, the job queries among them" \
  grep -qE '^5 +[0-9.]+ +.*REQUEST_JOB_USER_INFO [0-9]+ ' <<<"$(echo "$bench" | sed -n '/^rpcs of/,/^$/p')"
check "benchmark: the supervisor's file system calls per second" \
  grep -qE '^5 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ *$' <<<"$(echo "$bench" | sed -n '/^fs calls/,/^$/p')"
check "benchmark: the tick over 5 campaigns asked Slurm for jobs once" [ "$(echo "$tick" | awk '{print $3}')" = 1 ]
# Each campaign's lease taken (a synced write: the file and its folder); nothing else synced: the
# release, status.json and memory.json of a tick that found nothing new are not.
check "benchmark: the tick synced only the leases it took (2 fsyncs each)" [ "$(echo "$tick" | awk '{print $4}')" -le 10 ]
scenario_done

finish
