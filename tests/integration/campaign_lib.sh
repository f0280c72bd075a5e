# Helpers for end-to-end campaign scenarios (sourced after lib.sh): a campaign folder with a config
# that runs the test trainer through the shipped srun template on the live cluster.

TRAINER="$REPO/examples/trainer/train.py"
MLSUP=${MLSUP:?the test runner sets MLSUP}

# Creates a campaign: new_campaign NAME "TRAINER ARGS" [extra YAML lines]; sets CDIR and CONF.
new_campaign() {
  local name=$1 args=$2 extra=${3:-}
  CNAME="$name-$$-$RANDOM"
  CDIR=$(mktemp -d "/tmp/mlsup-e2e-$name.XXXXXX")
  CONF="$CDIR/campaign.yaml"
  cat > "$CONF" <<YAML
name: $CNAME
state_dir: "${STATE_DIR:-}"
template: $REPO/templates/srun.sbatch.tmpl
vars:
  script: $TRAINER
  script_args: $args
slurm:
  nodes: 1
  ntasks_per_node: 1
  time: "00:10:00"
  signal_lead: 60s
checkpoint:
  dir: "${CKPT_DIR:-}"
  layout: glob
  complete_marker: COMPLETE
heartbeat:
  dir: "${HB_DIR:-}"
  startup_timeout: 2m
  steady_timeout: ${STEADY_TIMEOUT:-1m}
  save_timeout: 2m
policy:
  backoff_initial: 1s
  backoff_max: 2s
poll_interval: 1s
$extra
YAML
  STATE=${STATE_DIR:-"$CDIR/.mlsup/$CNAME"}
}

# Announces a scenario and starts its clock; scenario_done prints its wall time.
scenario() { echo; echo "== $*"; SCENARIO_T0=$(date +%s); }
scenario_done() { echo "-- $(( $(date +%s) - SCENARIO_T0 ))s"; }

# Starts mlsup run on the campaign in the background; sets RUNNER (mlsup's own pid, so that
# signals reach the supervisor). The caller ends it with wait_campaign.
start_campaign() {
  "$MLSUP" run "$CONF" > "$CDIR/run.out" 2>&1 &
  RUNNER=$!
}

# Waits (at most LIMIT seconds, else kills it) for the background run; sets RC.
wait_campaign() {
  local limit=${1:-300}
  timeout "$limit" tail --pid="$RUNNER" -f /dev/null || kill -9 "$RUNNER" 2>/dev/null
  wait "$RUNNER"; RC=$?
  echo "mlsup run exited $RC: $(tail -n 1 "$CDIR/run.out")"
}

# True once the heartbeat of attempt 1 (in HB_DIR or the state dir) names step N or later.
heartbeat_at_least() {
  local step
  step=$(cut -d' ' -f1 "${HB_DIR:-$STATE/heartbeats}/attempt-1" 2>/dev/null)
  [ -n "$step" ] && [ "$step" -ge "$1" ] 2>/dev/null
}

# Runs mlsup run on the campaign with a hard timeout; sets RC and keeps the output in $CDIR/run.out.
run_campaign() {
  local limit=${1:-300}
  local t0=$(date +%s)
  timeout -s KILL "$limit" "$MLSUP" run "$CONF" > "$CDIR/run.out" 2>&1
  RC=$?
  echo "mlsup run exited $RC after $(( $(date +%s) - t0 ))s: $(tail -n 1 "$CDIR/run.out")"
}

# Jobs Slurm knows with this campaign's tag.
jobs_of_campaign() { scontrol -o show job 2>/dev/null | grep -c "Comment=mlsup:$CNAME:" || true; }

# A field of the trainer's result.
result_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$STATE/result.json" "$1"; }

# True when the result's chain is the one an uninterrupted run with the same nonce gets.
result_is_exact() {
  [ -f "$STATE/result.json" ] || return 1
  local expected
  expected=$(python3 "$TRAINER" --expected-result --nonce "$(result_field nonce)" --steps "$(result_field steps)")
  [ "$(result_field chain)" = "$expected" ]
}

# Steps the trainer executed over all attempts (rank 0).
steps_executed() {
  python3 -c 'import json,sys
print(sum(json.loads(l)["steps_executed"] for l in open(sys.argv[1]) if l.strip() and json.loads(l)["rank"] == 0))' "$STATE/trainer-log.jsonl"
}

# True when every attempt resumed from exactly the checkpoint mlsup recorded for it.
resumes_match() {
  python3 - "$STATE" <<'PY'
import json, sys
state = sys.argv[1]
intents = {}
for line in open(state + "/journal.jsonl"):
    r = json.loads(line)
    if r.get("type") == "submit-intent":
        intents[r["attempt"]] = r["resume_from"]
seen = {}
for line in open(state + "/trainer-log.jsonl"):
    r = json.loads(line)
    if r["rank"] == 0:
        seen[int(r["attempt"])] = r["resumed_from"]
bad = {a: (intents.get(a), s) for a, s in seen.items() if intents.get(a, "") != s}
if bad:
    print("resume mismatch (recorded, loaded):", bad)
sys.exit(1 if bad or not seen else 0)
PY
}

# True when the event log has an event of this kind.
has_event() { grep -q "\"event\":\"$1\"" "$STATE/events.jsonl"; }

# Makes a private folder for an sbatch wrapper ($shim/bin/sbatch, written by make_sbatch_wrapper and
# put first on PATH by the caller), removed at exit with whatever still runs from it. It sets the
# suite's EXIT trap: for suites that have none of their own.
sbatch_shim() {
  shim=$(mktemp -d /tmp/mlsup-e2e-shim.XXXXXX)
  trap 'pkill -f "$shim/" 2>/dev/null; rm -rf "$shim"' EXIT
}

# Writes the wrapper: make_sbatch_wrapper "before" "after" (shell snippets run around the real sbatch).
make_sbatch_wrapper() {
  mkdir -p "$shim/bin"
  printf '#!/bin/bash\n%s\n/usr/bin/sbatch "$@"\nrc=$?\n%s\nexit $rc\n' "$1" "$2" > "$shim/bin/sbatch"
  chmod +x "$shim/bin/sbatch"
}
