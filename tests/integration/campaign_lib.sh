# Helpers for end-to-end campaign scenarios (sourced after lib.sh): a campaign folder with a config
# that runs the test trainer through the shipped srun template on the live cluster.

TRAINER="$REPO/examples/trainer/train.py"  # a suite whose jobs run as another user points it at a readable copy
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
template: ${TEMPLATES:-$REPO/templates}/srun.sbatch.tmpl
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
  save_timeout: ${SAVE_TIMEOUT:-2m}
policy:
  backoff_initial: 1s
  backoff_max: 2s
poll_interval: 1s
$extra
YAML
  STATE=${STATE_DIR:-"$CDIR/.mlsup/$CNAME"}
}

# Chain mode: the campaign's jobs as tasks of one array, one at a time (slurm.array "1-8%1").
as_chain() { sed -i 's/^  time: "00:10:00"$/  time: "00:10:00"\n  array: "1-8%1"/' "$CONF"; }

# A lifecycle verb with a hard timeout; its exit code in VRC, its output in $CDIR/verb.out.
verb() {
  timeout -s KILL 150 "$MLSUP" "$@" > "$CDIR/verb.out" 2>&1
  VRC=$?
  echo "mlsup $1 exited $VRC: $(tr '\n' ' ' < "$CDIR/verb.out" | cut -c1-240)"
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

# The highest step attempt A's heartbeat names (1 unless given; in HB_DIR or the state dir): its file P, or
# the per-rank files P.d/<node>.<rank> (the plugin's, or the Python helper's): heartbeat_of [A].
heartbeat_of() {
  local p="${HB_DIR:-$STATE/heartbeats}/attempt-${1:-1}"
  cat "$p" "$p.d"/* 2>/dev/null | cut -d' ' -f1 | sort -n | tail -n 1
}

# True once the heartbeat of attempt A (1 unless given) names step N or later: heartbeat_at_least N [A].
heartbeat_at_least() {
  local step
  step=$(heartbeat_of "${2:-1}")
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

# mlsup's events of the campaign since T (epoch seconds), a line each with its time after T: where the
# time went after a fault. events_since T
events_since() {
  "$MLSUP" events "$CONF" --json | /usr/bin/python3 -c 'import json, sys
for e in map(json.loads, filter(str.strip, sys.stdin)):
    if e["time"] >= float(sys.argv[1]) - 1:
        print("  | +%.1f s %s %s" % (e["time"] - float(sys.argv[1]), e["event"], str(e.get("reason", ""))[:100]))' "$1"
}

# Steps the trainer executed over all attempts (rank 0).
steps_executed() {
  python3 -c 'import json,sys
print(sum(json.loads(l)["steps_executed"] for l in open(sys.argv[1]) if l.strip() and json.loads(l)["rank"] == 0))' "$STATE/trainer-log.jsonl"
}

# How each training process ended, one line per process: "attempt A rank R on NODE: REASON".
trainer_endings() {
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l)
        print("attempt %s rank %s on %s: %s" % (r["attempt"], r["rank"], r["node"], r["exit_reason"]))' "$STATE/trainer-log.jsonl" 2>/dev/null
}

# The campaign as mlsup itself shows it (`mlsup status --json`, `mlsup events --json`): the suites
# read its state there, never in its files.

# One top-level field of `mlsup status --json`, as Python prints it (None for null or absent).
status_field() {
  "$MLSUP" status "$CONF" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1]))' "$1"
}

# Prints a Python expression over `mlsup status --json` (s; the arguments after it are args): a list
# one item per line, None as nothing. status_query EXPR [ARGS...] (benchmarks/lib.sh's mlsup_status_query)
status_query() { mlsup_status_query "$MLSUP" "$CONF" "$@"; }

# A field of attempt N in the status history (nothing while it is null): attempt_field N KEY.
attempt_field() { status_query 'next((a[args[1]] for a in s["history"] if a["number"] == int(args[0])), None)' "$1" "$2"; }
# Attempt N's job (chain mode: the array); in chain mode, the array task that claimed it.
job_of_attempt() { attempt_field "$1" job_id; }
task_of_attempt() { attempt_field "$1" task_job_id; }
# The attempts' numbers, their jobs, and the attempts a chain task claimed, one per line, oldest first.
attempt_numbers() { status_query '[a["number"] for a in s["history"]]'; }
attempt_jobs() { status_query '[a["job_id"] for a in s["history"]]'; }
claimed_attempts() { status_query '[a["number"] for a in s["history"] if a["task_job_id"] is not None]'; }
# How many sbatch calls went through; how many exclusions were dropped from pending jobs.
sbatch_count() { status_query 'sum(a["submissions"] for a in s["history"])'; }
# True when one sbatch call submitted the job of every attempt (chain mode: one array ran them all).
one_submission_for_all() { [ "$(sbatch_count)" -eq 1 ] && [ "$(attempt_jobs | sort -u | wc -l)" -eq 1 ]; }
relaxed_count() { status_query 'sum(a["relaxed"] for a in s["history"])'; }
# The nodes the ledger ever held, one per line, sorted.
excluded_nodes() { status_query 'sorted({x["node"] for x in s["exclusions"]})'; }

# How many of the JSON objects on stdin (one per line; with --in KEY, the array KEY of one object)
# have every field as asked: KEY=VALUE (the field's text: a string as it is, anything else as JSON,
# e.g. true, 3) or KEY~TEXT (its text contains TEXT); a dotted KEY reaches into an object.
count_where() {
  /usr/bin/python3 -c 'import json, re, sys
conds = sys.argv[1:]
text = sys.stdin.read()
if conds[:1] == ["--in"]:
    items, conds = json.loads(text)[conds[1]], conds[2:]
else:
    items = [json.loads(l) for l in text.splitlines() if l.strip()]
def field(o, key):
    for k in key.split("."):
        if not isinstance(o, dict) or k not in o: return None
        o = o[k]
    return o if isinstance(o, str) else json.dumps(o, separators=(",", ":"))
def holds(o, cond):
    key, op, want = re.match(r"([^=~]+)([=~])(.*)", cond, re.S).groups()
    v = field(o, key)
    return v is not None and (v == want if op == "=" else want in v)
print(sum(all(holds(o, c) for c in conds) for o in items))' "$@"
}

# Exclusions in the ledger whose fields match (all without conditions): exclusion_count [KEY=VALUE|KEY~TEXT]...
exclusion_count() { "$MLSUP" status "$CONF" --json | count_where --in exclusions "$@"; }

# Events of a kind ("": of any) whose fields match: event_count KIND [KEY=VALUE|KEY~TEXT]...
event_count() {
  local kind=$1; shift
  "$MLSUP" events "$CONF" --json | count_where ${kind:+"event=$kind"} "$@"
}

# True when the event log has an event of this kind whose fields match: has_event KIND [KEY=VALUE|KEY~TEXT]...
has_event() { [ "$(event_count "$@")" -gt 0 ]; }

# True when every attempt resumed from exactly the checkpoint mlsup recorded for it.
resumes_match() {
  "$MLSUP" status "$CONF" --json | /usr/bin/python3 -c 'import json, sys
given = {a["number"]: a["resume_from"] for a in json.load(sys.stdin)["history"]}
seen = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["rank"] == 0:
        seen[int(r["attempt"])] = r["resumed_from"]
bad = {a: (given.get(a), s) for a, s in seen.items() if given.get(a, "") != s}
if bad:
    print("resume mismatch (recorded, loaded):", bad)
sys.exit(1 if bad or not seen else 0)' "$STATE/trainer-log.jsonl"
}

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

# Campaign sets ($SET: the set file; ticks kept in $TICKS, counted in $N).
# The runs of the set at $SET as `mlsup status --json` shows them: a Python expression over the list
# r (one view per run, each with its "set"), printed one item per line. set_query EXPR
set_query() {
  "$MLSUP" status --json "$SET" | /usr/bin/python3 -c 'import json,sys
r = json.load(sys.stdin)
v = eval(sys.argv[1])
for x in v if isinstance(v, list) else [v]:
    if x is not None: print(x)' "$1"
}
# The state of run $1 of the set.
run_state() { set_query "next(x[\"state\"] for x in r if x[\"set\"][\"run\"] == \"$1\")"; }
ticked_once() { [ "$N" -ge 1 ]; }
starts_with() { [[ "$1" == "$2"* ]]; }
all_ended() { [ "$(set_query '[x["state"] for x in r if x["state"] in ("completed", "stopped", "cancelled")]' | wc -l)" -eq "$1" ]; }

# Calls `mlsup tick SET` every 2 s, as cron would, until CONDITION holds or LIMIT seconds passed;
# each tick's output (stdout and stderr) is kept as $TICKS/N, its exit code in $TICKS/N.rc.
# tick_until LIMIT CONDITION...
tick_until() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    N=$((N + 1))
    timeout -s KILL 60 "$MLSUP" tick "$SET" > "$TICKS/$N" 2>&1; echo $? > "$TICKS/$N.rc"
    sleep 2
  done
}
