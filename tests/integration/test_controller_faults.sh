#!/usr/bin/env bash
# The controller's faults, end to end on the live cluster with the test trainer: an sbatch that
# outlives its supervisor (a slow controller), a controller that forgets a job it never started, a
# person's scancel seen only through the job's end record, a controller frozen or restarted while a
# training runs. Each scenario reproduces a way these broke a promise (two jobs of one attempt, a
# stop for a person, a cancel read as a time limit, a crash) and checks that it holds now.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

sbatch_shim

# The jobs of this campaign that ran a training process for attempt A (from the trainer's own log).
trained_jobs() {
  /usr/bin/python3 -c 'import json, sys
jobs = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if str(r["attempt"]) == sys.argv[2]: jobs.add(r["job_id"])
print(len(jobs))' "$STATE/trainer-log.jsonl" "$1" 2>/dev/null || echo 0
}

# Jobs Slurm shows with the tag of attempt A that started (a batch host; a job cancelled while it pended has none).
started_jobs_of_attempt() {
  scontrol -o show job 2>/dev/null | grep "Comment=mlsup:$CNAME:[^ ]*:$1 " | grep -c ' BatchHost=[^ (]' || true
}

# True while an sbatch of the wrapper runs (it sleeps before calling the real one).
wrapper_running() { pgrep -f "$shim/bin/sbatch" >/dev/null; }
no_wrapper_running() { ! wrapper_running; }

# True when every slurm-unavailable event's detail is printable text that begins with a letter (memory
# read after its free begins with the allocator's pointers).
details_whole() {
  "$MLSUP" events "$CONF" --json | /usr/bin/python3 -c 'import json, re, sys
details = [e.get("detail", "") for e in map(json.loads, sys.stdin) if e.get("event") == "slurm-unavailable"]
bad = [d for d in details if not re.fullmatch(r"[A-Za-z][ -~]*", d)]
print("details:", sorted(set(details)), "unreadable:", bad)
sys.exit(1 if bad or not details else 0)'
}

# Every node drained (or resumed): a job then waits in the queue without starting.
drain_all() { for n in $(sinfo -h -N -o %N | sort -u); do scontrol update NodeName="$n" State="$1" ${2:+"Reason=$2"}; done; }

# Reproduction: two jobs of one attempt when sbatch outlives its supervisor (run).
scenario_orphan_run() {
  scenario "the supervisor killed while its sbatch waits on a slow controller; run again at once -> one job of the attempt"
  new_campaign orphan-run "--steps 60 --step-seconds 0.1 --ckpt-every 10"
  make_sbatch_wrapper "sleep 6" ""
  PATH="$shim/bin:$PATH" "$MLSUP" run "$CONF" > "$CDIR/run1.out" 2>&1 &
  runner=$!
  wait_until 30 wrapper_running
  kill -9 "$runner"; wait "$runner" 2>/dev/null
  PATH="$shim/bin:$PATH" run_campaign 180
  check "orphaned sbatch (run): campaign completed" [ "$RC" -eq 0 ]
  check "orphaned sbatch (run): one job of attempt 1 started" [ "$(started_jobs_of_attempt 1)" -eq 1 ]
  check "orphaned sbatch (run): one job trained attempt 1" [ "$(trained_jobs 1)" -eq 1 ]
  check "orphaned sbatch (run): no node excluded" [ "$(exclusion_count)" -eq 0 ]
  check "orphaned sbatch (run): result equals a failure-free run's" result_is_exact
  scenario_done
}

# The same with a tick interrupted by SIGINT.
scenario_orphan_tick() {
  scenario "Ctrl-C (SIGINT) of a tick during its sbatch, then run -> the tick waits for its sbatch; one job of the attempt"
  new_campaign orphan-tick "--steps 60 --step-seconds 0.1 --ckpt-every 10"
  make_sbatch_wrapper "sleep 6" ""
  set -m  # job control: a background job takes SIGINT as a foreground one does from Ctrl-C
  PATH="$shim/bin:$PATH" "$MLSUP" tick "$CONF" > "$CDIR/tick.out" 2>&1 &
  ticker=$!
  set +m
  wait_until 30 wrapper_running
  kill -INT "$ticker"; wait "$ticker"; tick_rc=$?
  echo "tick after SIGINT: exit $tick_rc: $(tail -n 1 "$CDIR/tick.out")"
  check "orphaned sbatch (tick): the tick ended after its sbatch, not before" no_wrapper_running
  PATH="$shim/bin:$PATH" run_campaign 180
  check "orphaned sbatch (tick): campaign completed" [ "$RC" -eq 0 ]
  check "orphaned sbatch (tick): one job of attempt 1 started" [ "$(started_jobs_of_attempt 1)" -eq 1 ]
  check "orphaned sbatch (tick): one job trained attempt 1" [ "$(trained_jobs 1)" -eq 1 ]
  check "orphaned sbatch (tick): result equals a failure-free run's" result_is_exact
  scenario_done
}

# A job created after its sbatch said it failed: cancelled as a duplicate.
scenario_late_duplicate() {
  scenario "an sbatch whose answer is lost, its job created late -> the late job is cancelled as a duplicate and never starts"
  # The first sbatch says at once that the controller timed out, and submits 8 s later (in the background,
  # its output not on sbatch's pipes); mlsup looks for the tag for the grace, submits again, and the late
  # job (held, as mlsup submits) is the duplicate.
  new_campaign late-dup "--steps 200 --step-seconds 0.1 --ckpt-every 20"
  sed -i 's/^policy:$/policy:\n  submit_unknown_grace: 2s/' "$CONF"
  make_sbatch_wrapper "if mkdir \"$shim/once\" 2>/dev/null; then (sleep 8; /usr/bin/sbatch \"\$@\") >/dev/null 2>&1 </dev/null & echo 'sbatch: error: Batch job submission failed: Socket timed out on send/recv operation' >&2; exit 1; fi" ""
  PATH="$shim/bin:$PATH" run_campaign 180
  rm -rf "$shim/once"
  check "late duplicate: campaign completed" [ "$RC" -eq 0 ]
  check "late duplicate: the late job was cancelled as a duplicate" has_event duplicate-cancelled attempt=1 state=PENDING
  check "late duplicate: one job of attempt 1 started" [ "$(started_jobs_of_attempt 1)" -eq 1 ]
  check "late duplicate: one job trained attempt 1" [ "$(trained_jobs 1)" -eq 1 ]
  check "late duplicate: result equals a failure-free run's" result_is_exact
  scenario_done
}

# Reproduction: a controller crash that loses a job stopped the campaign for a person.
scenario_ctld_crash() {
  scenario "slurmctld crashes after a submission and comes back without the job -> submitted again by itself, not a stop for a person"
  new_campaign forgot "--steps 60 --step-seconds 0.1 --ckpt-every 10"
  drain_all DRAIN "held for the controller crash test"
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" snapshot-ctld "$CDIR/ctld-state" >/dev/null 2>&1
  start_campaign
  wait_until 60 sh -c "[ \"\$(scontrol -o show job 2>/dev/null | grep -c 'Comment=mlsup:$CNAME:')\" -ge 1 ]"
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" crash-ctld --restore "$CDIR/ctld-state" >/dev/null 2>&1
  drain_all RESUME 2>/dev/null  # the state put back may predate the drain
  wait_campaign 240
  check "controller crash: campaign completed" [ "$RC" -eq 0 ]
  check "controller crash: the forgotten job was submitted again, classed forgotten" has_event attempt-ended attempt=1 class=forgotten action=resubmit
  check "controller crash: no stop for a person" [ "$(event_count attempt-ended class=end_unknown)" -eq 0 ]
  check "controller crash: result equals a failure-free run's" result_is_exact
  scenario_done
}

# Reproduction: a person's scancel read as a time limit once Slurm forgot the job.
scenario_scancel() {
  scenario "a person's scancel, seen only through the job's end record (the controller forgot the job) -> stopped (12), not a time limit"
  new_campaign scancel "--steps 3000 --step-seconds 0.1 --ckpt-every 50"
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" snapshot-ctld "$CDIR/ctld-state" >/dev/null 2>&1
  "$MLSUP" tick "$CONF" > "$CDIR/tick1.out" 2>&1
  wait_until 60 heartbeat_at_least 5
  job=$(scontrol -o show job | grep "Comment=mlsup:$CNAME:" | grep -o '^JobId=[0-9]*' | cut -d= -f2 | head -1)
  scancel "$job"
  wait_until 60 test -s "$STATE/ends/$job"
  wait_until 60 sh -c "! scontrol -o show job $job 2>/dev/null | grep -q 'JobState=\(RUNNING\|COMPLETING\)'"
  echo "end record: $(tr '\n' ' ' < "$STATE/ends/$job" | cut -c1-160)"
  # The controller loses the job (its state from before it), as MinJobAge's purge would between cron ticks.
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" crash-ctld --restore "$CDIR/ctld-state" >/dev/null 2>&1
  "$MLSUP" tick "$CONF" > "$CDIR/tick2.out" 2>&1; RC=$?
  cat "$CDIR/tick2.out"
  check "scancel after the purge: the tick stops the campaign with exit 12" [ "$RC" -eq 12 ]
  check "scancel after the purge: classed cancelled from the end record" has_event attempt-ended class=cancelled end_source=end_record
  check "scancel after the purge: no time limit, nothing resubmitted" [ "$(event_count attempt-ended class=timeout)" -eq 0 ]
  scenario_done
}

# Reproduction: the supervisor aborted (memory read after its free) when slurmctld stopped answering.
scenario_outage() {
  local backend=$1
  scenario "$backend: slurmctld frozen 25 s, then restarted 3 times while a 2-node training runs -> no crash, every detail whole, one job"
  new_campaign "outage-$backend" "--steps 900 --step-seconds 0.1 --ckpt-every 50"
  sed -i "s/^slurm:$/slurm:\n  backend: $backend/; s/^  nodes: 1$/  nodes: 2/; s/^poll_interval: 1s$/poll_interval: 500ms/" "$CONF"
  start_campaign
  wait_until 60 heartbeat_at_least 20
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" freeze-ctld >/dev/null 2>&1
  sleep 25
  "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" thaw-ctld >/dev/null 2>&1
  for i in 1 2 3; do
    sleep 3
    "$REPO/tests/cluster/cluster.sh" stop-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1
    sleep 4
    "$REPO/tests/cluster/cluster.sh" start-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1
  done
  check "$backend outage: the supervisor still runs" kill -0 "$RUNNER"
  no_sanitizer_report() { ! grep -E -A30 'Sanitizer|runtime error:' "$CDIR/run.out"; }
  wait_campaign 300
  check "$backend outage: campaign completed" [ "$RC" -eq 0 ]
  check "$backend outage: the outage is in the event log" has_event slurm-unavailable
  # Every detail is Slurm's own words, whole: one that starts in garbage is memory read after its free.
  check "$backend outage: every slurm-unavailable detail is whole" details_whole
  check "$backend outage: one submission, one job" [ "$(sbatch_count)" -eq 1 ]
  check "$backend outage: no failure" [ "$(event_count attempt-ended class=failed)" -eq 0 ]
  check "$backend outage: result equals a failure-free run's" result_is_exact
  check "$backend outage: no sanitizer report (under ASan and UBSan: scripts/test.sh)" no_sanitizer_report
  scenario_done
}

# A SIGHUP while a campaign's first pass is under way (its sbatch slow) is applied at the next pass.
scenario_sighup_first_pass() {
  scenario "SIGHUP during a campaign's first pass (a slow sbatch) -> the new config is taken, not lost"
  new_campaign sighup "--steps 100 --step-seconds 0.1 --ckpt-every 20"
  make_sbatch_wrapper "sleep 5" ""
  PATH="$shim/bin:$PATH" "$MLSUP" run "$CONF" > "$CDIR/run.out" 2>&1 &
  RUNNER=$!
  wait_until 30 wrapper_running
  sed -i 's/^  backoff_max: 2s$/  backoff_max: 3s/' "$CONF"
  kill -HUP "$RUNNER"
  wait_campaign 120
  check "SIGHUP in the first pass: campaign completed" [ "$RC" -eq 0 ]
  check "SIGHUP in the first pass: the config was reloaded" has_event config-reloaded changed~policy.backoff_max
  scenario_done
}

# Runs mlsup as on another login node: a UTS and a mount namespace of its own, with host name $1 and
# an /etc/machine-id of its own (bind-mounted), so that the lease and the sbatch record take it for
# another host; the caller's process becomes mlsup (run it with & for its pid). as_login_node HOST ARGS...
as_login_node() {
  local host=$1; shift
  printf '%s\n' "$(printf '%s' "$host" | sha256sum | cut -c1-32)" > "$CDIR/machine-id-$host"
  exec unshare --uts --mount --propagation private sh -c 'hostname "$1"; mount --bind "$2" /etc/machine-id; shift 2; exec "$@"' \
    sh "$host" "$CDIR/machine-id-$host" "$@"
}

# Two supervisors on two "login nodes" over one campaign: the holder frozen (SIGSTOP) during its sbatch
# past the lease; the other takes over, adopts the job that sbatch submits, and the frozen one, woken,
# submits nothing that runs and ends (exit 5) without writing on.
scenario_ha_frozen_holder() {
  scenario "two supervisors on two login nodes: the holder frozen during its sbatch past the lease -> the other takes over; the woken one does nothing"
  new_campaign ha "--steps 200 --step-seconds 0.1 --ckpt-every 20"
  sed -i 's/^poll_interval: 1s$/poll_interval: 1s\nlease_ttl: 10s/' "$CONF"
  make_sbatch_wrapper "sleep 8" ""
  PATH="$shim/bin:$PATH" as_login_node login-a "$MLSUP" run "$CONF" > "$CDIR/run-a.out" 2>&1 &
  local a=$!
  wait_until 30 wrapper_running
  PATH="$shim/bin:$PATH" as_login_node login-b "$MLSUP" run --standby "$CONF" > "$CDIR/run-b.out" 2>&1 &
  local b=$!
  kill -STOP "$a"
  local frozen_at; frozen_at=$(date +%s)
  # The holder renewed its lease for its sbatch's deadline (2 minutes) before it ran it: the other takes
  # over once that has passed.
  check "HA: the other supervisor takes the campaign over and adopts the job the frozen one's sbatch submitted" \
    wait_until 200 has_event adopted attempt=1 2>/dev/null
  echo "taken over and adopted $(( $(date +%s) - frozen_at ))s after the freeze (lease_ttl 10s, held for the sbatch's 2 minutes)"
  kill -CONT "$a"
  wait "$a"; local rc_a=$?
  echo "the woken supervisor exited $rc_a: $(tail -n 1 "$CDIR/run-a.out")"
  RUNNER=$b
  wait_campaign 180
  echo "the supervisor that took over: $(tail -n 1 "$CDIR/run-b.out")"
  check "HA: the woken supervisor stops, its lease lost (exit 5)" [ "$rc_a" -eq 5 ]
  check "HA: the one that took over completes the campaign" [ "$RC" -eq 0 ]
  check "HA: one job of attempt 1 started" [ "$(started_jobs_of_attempt 1)" -eq 1 ]
  check "HA: one job trained attempt 1" [ "$(trained_jobs 1)" -eq 1 ]
  check "HA: nothing submitted twice" [ "$(sbatch_count)" -le 1 ]
  check "HA: result equals a failure-free run's" result_is_exact
  scenario_done
}

# The short chaos run with every fault of the controller (the long one is README's Chaos).
scenario_chaos() {
  scenario "chaos: supervisor kills (during slow sbatches too), slurmctld restarted, frozen 20 s and crashed losing its last seconds, a 2-node training"
  local out line
  out=$(MLSUP="$MLSUP" timeout -s KILL 480 bash "$REPO/benchmarks/chaos.sh" --kills 8 --slow-sbatch 4 --ctld-restarts 1 \
    --ctld-freezes 1 --freeze-seconds 20 --ctld-crashes 1 --fault-every 0 --nodes 2 --restart-every 15 --steps 1800 \
    --limit 420 2>&1)
  echo "$out" | tail -n 3
  line=$(echo "$out" | grep '^chaos:' | tail -n 1)
  said() { grep -qE "$1" <<<"$line"; }
  check "controller chaos: the run ended with its summary" [ -n "$line" ]
  check "controller chaos: 8 supervisor kills" said "^chaos: 8 supervisor kills"
  check "controller chaos: each controller fault happened" said " 1 slurmctld restarts, 1 freezes, 1 crashes,"
  check "controller chaos: never two running jobs of the campaign at once" said "most running at once: 1;"
  check "controller chaos: no duplicate ever started" said "duplicates started: 0,"
  check "controller chaos: no ending lost" said "lost endings: 0;"
  check "controller chaos: no false failure" said "false failures: 0;"
  check "controller chaos: no node excluded for a controller fault" said ", false: 0;"
  check "controller chaos: the result equals an uninterrupted run's" said "result exact: yes;"
  check "controller chaos: the last run completed the campaign (exit 0)" said "last run exit 0;"
  scenario_done
}

# The scenarios named on the command line (outage-libslurm, orphan-run, ...), or every one.
all=(orphan-run orphan-tick late-duplicate ctld-crash scancel sighup-first-pass ha-frozen-holder outage-libslurm outage-cli chaos)
for name in "${@:-${all[@]}}"; do
  case $name in
    outage-*) scenario_outage "${name#outage-}" ;;
    *) "scenario_${name//-/_}" ;;
  esac
done

finish
