#!/usr/bin/env bash
# The supervisor with the SPANK plugin, end to end: a cluster of its own (4 nodes, SlurmdTimeout=300)
# with the plugin loaded `optional` and a health check, the supervisor and its jobs running as an
# ordinary user (so the records really are written as the job's user). A sticky bad node is
# excluded at its first failure from the task-exit records; a node failing its health check is
# excluded before the training ever ran there; a frozen node (power loss) is named by the per-task
# heartbeats and replaced while Slurm still calls it up.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/campaign_lib.sh"

BUILD=$(dirname "$MLSUP")
SO="$BUILD/plugins/mlsup_spank.so"
USER_NAME=mlsupuser
[ -f "$SO" ] || { echo "FAILED: $SO is missing (build first)"; echo "0 passed, 1 failed"; exit 1; }
id "$USER_NAME" >/dev/null 2>&1 || useradd -m "$USER_NAME" || {
  echo "FAILED: cannot create user $USER_NAME"; echo "0 passed, 1 failed"; exit 1; }

T=$(mktemp -d /tmp/mlsup-spank-campaign.XXXXXX)
chmod 0755 "$T"
HEALTH="$T/health.sh"
install -m 0755 "$REPO/tests/standins/health_fail_on.sh" "$HEALTH"
: >"$HEALTH.bad-nodes"
chmod 0644 "$HEALTH.bad-nodes"
echo "optional $SO health_check=$HEALTH health_fail_job=yes health_timeout=10" >"$T/plugstack.conf"
CLUSTER="$T/cluster"
trap '"$REPO/tests/cluster/cluster.sh" stop --dir "$CLUSTER" --clean >/dev/null 2>&1; rm -rf "$T"' EXIT
conf_line=$("$REPO/tests/cluster/cluster.sh" start --dir "$CLUSTER" --nodes 4 --slurmd-timeout 300 --plugstack "$T/plugstack.conf") || {
  echo "FAILED: the cluster with the plugin did not start"; echo "0 passed, 1 failed"; exit 1; }
export "$conf_line"
export MLSUP_FAULT_DIR=$CLUSTER  # the trainer crashes on nodes marked sticky-bad there (readable by the user)
echo "cluster up in $(( $(date +%s) - SUITE_STARTED ))s"

fault() { "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER" "$@" >/dev/null 2>&1; }
all_nodes() { sinfo -h -N -o '%N' | sort -uV; }
nodes_of() { scontrol show hostnames "$(scontrol -o show job "$1" | grep -o ' NodeList=[^ ]*' | cut -d= -f2)"; }
attempts() { attempt_numbers | tr '\n' ' '; }
job_avoids() { ! nodes_of "$1" | grep -qx "$2"; }
replacement_running() { local j; j=$(job_of_attempt 2); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }
# The highest step in attempt 1's per-task heartbeat files (P.d/<node>.<rank>).
per_task_step_at_least() {
  local s
  s=$(cat "$STATE/heartbeats/attempt-1.d"/* 2>/dev/null | cut -d' ' -f1 | sort -n | tail -1)
  [ -n "$s" ] && [ "$s" -ge "$1" ] 2>/dev/null
}
# A campaign of a 2-node job, in a folder the user owns; the supervisor then runs as the user.
user_campaign() {
  new_campaign "$@"
  sed -i 's/^  nodes: 1$/  nodes: 2/' "$CONF"
  chown -R "$USER_NAME:" "$CDIR"
}
as_user() {
  runuser -u "$USER_NAME" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$USER_NAME" LANG=C \
    SLURM_CONF="$SLURM_CONF" MLSUP_FAULT_DIR="$MLSUP_FAULT_DIR" "$@"
}
start_campaign() { as_user "$MLSUP" run "$CONF" >"$CDIR/run.out" 2>&1 & RUNNER=$!; }
run_campaign() {
  local t0; t0=$(date +%s)
  as_user timeout -s KILL "${1:-120}" "$MLSUP" run "$CONF" >"$CDIR/run.out" 2>&1
  RC=$?
  echo "mlsup run (as $USER_NAME) exited $RC after $(( $(date +%s) - t0 ))s: $(tail -n 1 "$CDIR/run.out")"
}
owned_by_user() { [ -z "$(find "$1" ! -user "$USER_NAME" -print -quit)" ]; }

NODES=($(all_nodes))

scenario "sticky bad node (the trainer crashes on rank 1's node) -> excluded at the first failure from the records"
NODE=${NODES[1]}  # Slurm fills the lowest nodes first: rank 1 runs on the second
fault sticky-bad "$NODE"
user_campaign sticky "--steps 60 --step-seconds 0.05 --ckpt-every 10"
run_campaign 120
fault sticky-clear "$NODE"
J1=$(job_of_attempt 1) J2=$(job_of_attempt 2)
echo "attempts: $(attempts); attempt 1 (job $J1) on $(nodes_of "$J1" | tr '\n' ' '); attempt 2 (job $J2) on $(nodes_of "$J2" | tr '\n' ' ')"
check "sticky: campaign completed" [ "$RC" -eq 0 ]
check "sticky: two attempts, the second after the first failure" [ "$(attempts)" = "1 2 " ]
check "sticky: one exclusion, naming $NODE" [ "$(exclusion_count):$(excluded_nodes)" = "1:$NODE" ]
check "sticky: its reason is the first failing task" [ "$(exclusion_count node="$NODE" reason~'first failing task')" -eq 1 ]
check "sticky: attempt-ended names the first failing task (rank 1 on $NODE, exit 1)" \
  has_event attempt-ended attempt=1 first_failure.exit_code=1 first_failure.node="$NODE" first_failure.rank=1 first_failure.signal=0
check "sticky: attempt 2 avoids it" job_avoids "$J2" "$NODE"
check "sticky: the records were written as the user" owned_by_user "$STATE/nodes"
check "sticky: result equals a failure-free run's" result_is_exact
scenario_done

scenario "health check fails on one node -> its tasks exit 79 before training, it is excluded, attempt 2 completes"
NODE=${NODES[1]}
echo "$NODE" >"$HEALTH.bad-nodes"
user_campaign health "--steps 40 --step-seconds 0.05 --ckpt-every 10"
run_campaign 120
: >"$HEALTH.bad-nodes"
J1=$(job_of_attempt 1) J2=$(job_of_attempt 2)
echo "attempts: $(attempts); attempt 2 (job $J2) on $(nodes_of "$J2" | tr '\n' ' ')"
check "health: campaign completed" [ "$RC" -eq 0 ]
check "health: two attempts" [ "$(attempts)" = "1 2 " ]
check "health: a failed health record of $NODE" grep -q '"kind":"health".*"ok":false' "$STATE/nodes/$J1/$NODE.jsonl"
check "health: its task exited 79" grep -q '"kind":"task-exit".*"exit_code":79' "$STATE/nodes/$J1/$NODE.jsonl"
check "health: the training never started on it in attempt 1" \
  sh -c "! grep '\"attempt\": 1,' '$STATE/trainer-log.jsonl' | grep -q '\"node\": \"$NODE\"'"
check "health: one exclusion" [ "$(exclusion_count)" -eq 1 ]
check "health: it names $NODE, for its health check" [ "$(exclusion_count node="$NODE" reason~'health check failed')" -eq 1 ]
check "health: attempt 2 avoids it" job_avoids "$J2" "$NODE"
check "health: result equals a failure-free run's" result_is_exact
scenario_done

scenario "power loss (node frozen), SlurmdTimeout=300, per-task heartbeats -> the heartbeats name the node; replaced while Slurm calls it up"
STEADY_TIMEOUT=5s user_campaign powerloss "--steps 150 --step-seconds 0.1 --ckpt-every 10"
start_campaign
wait_until 90 per_task_step_at_least 30
J1=$(job_of_attempt 1)
NODE=$(nodes_of "$J1" | tail -1)  # rank 1's node; rank 0 waits for it in the collective
FAULT_AT=$(date +%s.%N)
fault freeze "$NODE"
wait_until 90 replacement_running
TOOK=$(python3 -c "import time,sys; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$FAULT_AT")
state=$(sinfo -h -N -n "$NODE" -o '%T' | head -1)
echo "froze $NODE of job $J1; replacement $(job_of_attempt 2) RUNNING after ${TOOK}s; Slurm shows the node $state"
echo "heartbeat files of attempt 1: $(cd "$STATE/heartbeats/attempt-1.d" 2>/dev/null && for f in *; do printf '%s=%s ' "$f" "$(tr '\n' ' ' <"$f")"; done)"
"$MLSUP" events "$CONF" --json | grep -E '"event":"(hang-detected|heartbeat-stale-first|excluded)"' | cut -c1-300
check "power loss: per-task heartbeat files were written (P.d/<node>.<rank>)" [ -f "$STATE/heartbeats/attempt-1.d/$NODE.1" ]
check "power loss: the heartbeat rule named $NODE" has_event heartbeat-stale-first nodes~"\"node\":\"$NODE\""
check "power loss: the exclusion names $NODE for its heartbeat" has_event excluded node="$NODE" reason~'its heartbeat stopped'
check "power loss: the ledger holds exactly $NODE" [ "$(excluded_nodes)" = "$NODE" ]
check "power loss: the replacement runs within 40 s of the freeze" python3 -c "import sys; sys.exit(float(sys.argv[1]) > 40)" "$TOOK"
check "power loss: the replacement does not use it" job_avoids "$(job_of_attempt 2)" "$NODE"
check "power loss: Slurm still calls the frozen node up ($state)" sh -c "echo '$state' | grep -qvE 'down|\\*'"
fault revive "$NODE" --timeout 30
wait_campaign 120
check "power loss: campaign completed" [ "$RC" -eq 0 ]
check "power loss: result equals a failure-free run's" result_is_exact
scenario_done

finish
