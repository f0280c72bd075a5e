#!/usr/bin/env bash
# The supervisor with the SPANK plugin, end to end: a cluster of its own (4 nodes, SlurmdTimeout=300)
# with the plugin loaded `optional` and a health check, the supervisor and its jobs running as an
# ordinary user (so the records really are written as the job's user), mlsup, the plugin, the template
# and the trainer laid out outside the checkout as installed (a checkout may be unreadable to others). A sticky bad node (its rank
# exits 1: weak evidence) is named by the task-exit records as the failure's first and excluded at
# once (the first-evidence rule), the other node's task a victim; a node failing its health check is
# excluded before the training ever ran there; a node's bad GPU is excluded by its UUID and the exclusion
# follows the board to the node it is moved into (the plugin's node records); a frozen node (power loss) is named by the per-task
# heartbeats and replaced while Slurm still calls it up; in chain mode, the next task's per-task
# heartbeats go under its own attempt's path.
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
install_for_users "$T/opt" "$BUILD" || { echo "FAILED: cannot lay out mlsup in $T/opt"; echo "0 passed, 1 failed"; exit 1; }
# The user runs mlsup, the plugin, the template and the trainer from there, as from an installation.
SO="$T/opt/lib/slurm/mlsup_spank.so" MLSUP="$T/opt/bin/mlsup"
TEMPLATES="$T/opt/share/mlsup/templates" TRAINER="$T/opt/share/mlsup/trainer/train.py"
HEALTH="$T/health.sh"
install -m 0755 "$REPO/tests/standins/health_fail_on.sh" "$HEALTH"
: >"$HEALTH.bad-nodes"
chmod 0644 "$HEALTH.bad-nodes"
# Each node's GPUs as the driver lists them, from a folder of its own (the nodes share this host).
GPUS="$T/gpus"
mkdir -p "$GPUS"
echo "optional $SO health_check=$HEALTH health_fail_job=yes health_timeout=10 gpu_info=$GPUS/%n" >"$T/plugstack.conf"
CLUSTER="$T/cluster"
trap '"$REPO/tests/cluster/cluster.sh" stop --dir "$CLUSTER" --clean >/dev/null 2>&1; rm -rf "$T"' EXIT
conf_line=$("$REPO/tests/cluster/cluster.sh" start --dir "$CLUSTER" --nodes 4 --slurmd-timeout 300 --plugstack "$T/plugstack.conf") || {
  echo "FAILED: the cluster with the plugin did not start"; echo "0 passed, 1 failed"; exit 1; }
export "$conf_line"
export MLSUP_FAULT_DIR=$CLUSTER  # the trainer crashes on nodes marked sticky-bad there (readable by the user)
echo "cluster up in $(( $(date +%s) - SUITE_STARTED ))s"

fault() { "$REPO/tests/cluster/fault.sh" --dir "$CLUSTER" "$@" >/dev/null 2>&1; }
all_nodes() { sinfo -h -N -o '%N' | sort -uV; }
attempts() { attempt_numbers | tr '\n' ' '; }
job_avoids() { ! nodes_of "$1" | grep -x "$2" >/dev/null; }
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
# campaign_lib's start_campaign and run_campaign, with the supervisor run as the user (RUNNER: runuser's pid).
start_campaign_as_user() { as_user "$MLSUP" run "$CONF" >"$CDIR/run.out" 2>&1 & RUNNER=$!; }
run_campaign_as_user() {
  local t0; t0=$(date +%s)
  as_user timeout -s KILL "${1:-120}" "$MLSUP" run "$CONF" >"$CDIR/run.out" 2>&1
  RC=$?
  echo "mlsup run (as $USER_NAME) exited $RC after $(( $(date +%s) - t0 ))s: $(tail -n 1 "$CDIR/run.out")"
}
owned_by_user() { [ -z "$(find "$1" ! -user "$USER_NAME" -print -quit)" ]; }
# The per-task heartbeat files of attempt N (P.d/<node>.<rank>) as "name=step ", and the highest step in them.
per_task_files() { (cd "$STATE/heartbeats/attempt-$1.d" 2>/dev/null && for f in *; do printf '%s=%s ' "$f" "$(cut -d' ' -f1 <"$f")"; done); }
per_task_max() { cat "$STATE/heartbeats/attempt-$1.d"/* 2>/dev/null | cut -d' ' -f1 | sort -n | tail -1; }
# True when attempt N's per-task files are one per rank (node.0, node.1), each named after a node of the cluster.
per_task_named() { [ "$(ls "$STATE/heartbeats/attempt-$1.d" 2>/dev/null | grep -cE "^($(all_nodes | paste -sd'|'))\.[01]$")" -eq 2 ]; }

NODES=($(all_nodes))

scenario "sticky bad node (the trainer exits 1 on rank 1's node) -> the records name it first, it is excluded at once"
NODE=${NODES[1]}  # Slurm fills the lowest nodes first: rank 1 runs on the second
fault sticky-bad "$NODE"
user_campaign sticky "--steps 60 --step-seconds 0.05 --ckpt-every 10"
run_campaign_as_user 120
fault sticky-clear "$NODE"
J1=$(job_of_attempt 1) J2=$(job_of_attempt 2)
echo "attempts: $(attempts); attempt 1 (job $J1) on $(nodes_of "$J1" | tr '\n' ' '); attempt 2 (job $J2) on $(nodes_of "$J2" | tr '\n' ' ')"
check "sticky: campaign completed" [ "$RC" -eq 0 ]
check "sticky: two attempts, the second after the first failure" [ "$(attempts)" = "1 2 " ]
check "sticky: one exclusion, naming $NODE" [ "$(exclusion_count):$(excluded_nodes)" = "1:$NODE" ]
check "sticky: its reason is the first failure in the plugin's records" [ "$(exclusion_count node="$NODE" reason~"the plugin's records")" -eq 1 ]
check "sticky: attempt-ended names the first failing task (rank 1 on $NODE, exit 1)" \
  has_event attempt-ended attempt=1 first_failure.exit_code=1 first_failure.node="$NODE" first_failure.rank=1 first_failure.signal=0
check "sticky: attempt 1 had $NODE as its one suspect" has_event attempt-ended attempt=1 suspects="[\"$NODE\"]"
check "sticky: attempt 2 avoids it" job_avoids "$J2" "$NODE"
check "sticky: the records were written as the user" owned_by_user "$STATE/nodes"
check "sticky: result equals a failure-free run's" result_is_exact
scenario_done

scenario "health check fails on one node -> its tasks exit 79 before training, it is excluded, attempt 2 completes"
NODE=${NODES[1]}
echo "$NODE" >"$HEALTH.bad-nodes"
user_campaign health "--steps 40 --step-seconds 0.05 --ckpt-every 10"
run_campaign_as_user 120
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

scenario "GPU identity: a node's GPU fails its check -> excluded with its UUID; the board moved to another node takes the exclusion along"
# n1..n3 have a GPU each (the driver's information file); the one in the second node is bad. The
# scenario's check fails where the bad board is, once: then the board is moved to the third node (a
# technician's swap) and the check passes everywhere. Attempt 2 runs on the third node, and fails by
# the training's own fault (an evidence rule of the campaign: software, no node blamed); its records
# show the bad board there: the exclusion follows it, and the second node is free again.
BAD=GPU-5eb1a7c0-0000-4000-8000-0000000000bd
gpu_dir() {  # gpu_dir NODE BUS UUID: the driver's information file of one GPU
  mkdir -p "$GPUS/$1/$2"
  printf 'Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.89.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t 0\nGPU Excluded:\t No\n' \
    "$3" "$2" >"$GPUS/$1/$2/information"
}
rm -rf "${GPUS:?}"/*
gpu_dir "${NODES[0]}" 0000:07:00.0 GPU-5eb1a7c0-0000-4000-8000-000000000001
gpu_dir "${NODES[1]}" 0000:07:00.0 "$BAD"
gpu_dir "${NODES[2]}" 0000:07:00.0 GPU-5eb1a7c0-0000-4000-8000-000000000003
chown -R "$USER_NAME:" "$GPUS"
cp "$HEALTH" "$T/health.plain"
cat >"$HEALTH" <<SH
#!/bin/sh
# Fails on the node holding $BAD while $T/gpu-move exists, and moves the board to ${NODES[2]}.
node=\${MLSUP_NODE:-\$SLURMD_NODENAME}
if grep -qs "$BAD" "$GPUS/\$node"/*/information && rm "$T/gpu-move" 2>/dev/null; then
  mv "$GPUS/\$node/0000:07:00.0" "$GPUS/${NODES[2]}/0000:3b:00.0"
  echo "GPU check failed on \$node"
  exit 1
fi
echo "node \$node ok"
SH
chmod 0755 "$HEALTH"
: >"$T/gpu-move"
chown "$USER_NAME:" "$T/gpu-move"
chmod 0777 "$T"
user_campaign gpus "--steps 40 --step-seconds 0.05 --ckpt-every 10 --fail-at-step 20 --fail-attempts 2"
cat >>"$CONF" <<YAML
evidence:
  rules:
    - name: injected
      pattern: 'injected crash at step'
      class: software
      blame: none
      action: retry_no_blame
YAML
run_campaign_as_user 150
cp "$T/health.plain" "$HEALTH"
chmod 0755 "$T"
rm -rf "${GPUS:?}"/*
J1=$(job_of_attempt 1) J2=$(job_of_attempt 2) J3=$(job_of_attempt 3)
echo "attempts: $(attempts); attempt 2 (job $J2) on $(nodes_of "$J2" | tr '\n' ' '); attempt 3 (job $J3) on $(nodes_of "$J3" | tr '\n' ' ')"
"$MLSUP" exclusions "$CONF" | sed 's/^/  /'
check "gpus: campaign completed" [ "$RC" -eq 0 ]
check "gpus: three attempts" [ "$(attempts)" = "1 2 3 " ]
check "gpus: ${NODES[1]} excluded with its GPU's UUID" [ "$(exclusion_count node="${NODES[1]}" gpus="[\"$BAD\"]")" -eq 1 ]
check "gpus: attempt 2 saw the board in ${NODES[2]}" grep -q "\"uuid\":\"$BAD\"" "$STATE/nodes/$J2/${NODES[2]}.jsonl"
check "gpus: the exclusion followed it (exclusion-moved ${NODES[1]} -> ${NODES[2]})" has_event exclusion-moved from="${NODES[1]}" to="${NODES[2]}"
check "gpus: ${NODES[2]} excluded, carrying the UUID" [ "$(exclusion_count node="${NODES[2]}" gpus="[\"$BAD\"]" live=true)" -eq 1 ]
check "gpus: ${NODES[1]}'s exclusion ended, saying why" [ "$(exclusion_count node="${NODES[1]}" live=false ended_by~"found in ${NODES[2]}")" -eq 1 ]
check "gpus: the training's fault blamed no node" [ "$(exclusion_count)" -eq 2 ]
check "gpus: \`mlsup exclusions\` tells how it ended" \
  [ "$("$MLSUP" exclusions "$CONF" --json | count_where --in exclusions node="${NODES[1]}" lifted.how~"followed its GPUs" lifted.to="${NODES[2]}")" -eq 1 ]
check "gpus: \`mlsup exclusions\` says where ${NODES[2]}'s came from" \
  [ "$("$MLSUP" exclusions "$CONF" --json | count_where --in exclusions node="${NODES[2]}" moved_from="${NODES[1]}")" -eq 1 ]
check "gpus: attempt 3 avoids ${NODES[2]}" job_avoids "$J3" "${NODES[2]}"
check "gpus: attempt 3 excludes ${NODES[2]}, not ${NODES[1]}" [ "$(attempt_field 3 exclude | paste -sd' ')" = "${NODES[2]}" ]
check "gpus: result equals a failure-free run's" result_is_exact
scenario_done

scenario "power loss (node frozen), SlurmdTimeout=300, per-task heartbeats -> the heartbeats name the node; replaced while Slurm calls it up"
# The freeze may land in a save (rank 1 says "saving" until rank 0 has written), where save_timeout
# applies: it is short here so that either phase names the node within the bound.
STEADY_TIMEOUT=5s SAVE_TIMEOUT=8s user_campaign powerloss "--steps 150 --step-seconds 0.1 --ckpt-every 10"
start_campaign_as_user
wait_until 90 per_task_step_at_least 30
J1=$(job_of_attempt 1)
NODE=$(nodes_of "$J1" | tail -1)  # rank 1's node; rank 0 waits for it in the collective
FAULT_AT=$(date +%s.%N)
fault freeze "$NODE"
wait_until 90 replacement_running
TOOK=$(seconds_since "$FAULT_AT")
state=$(sinfo -h -N -n "$NODE" -o '%T' | head -1)
echo "froze $NODE of job $J1; replacement $(job_of_attempt 2) RUNNING after ${TOOK}s; Slurm shows the node $state"
echo "heartbeat files of attempt 1: $(cd "$STATE/heartbeats/attempt-1.d" 2>/dev/null && for f in *; do printf '%s=%s ' "$f" "$(tr '\n' ' ' <"$f")"; done)"
"$MLSUP" events "$CONF" --json | grep -E '"event":"(hang-detected|heartbeat-stale-first|excluded)"' | cut -c1-300
check "power loss: per-task heartbeat files were written (P.d/<node>.<rank>)" [ -f "$STATE/heartbeats/attempt-1.d/$NODE.1" ]
check "power loss: the heartbeat rule named $NODE" has_event heartbeat-stale-first nodes~"\"node\":\"$NODE\""
check "power loss: the exclusion names $NODE for its heartbeat" has_event excluded node="$NODE" reason~'its heartbeat stopped'
check "power loss: the ledger holds exactly $NODE" [ "$(excluded_nodes)" = "$NODE" ]
check "power loss: the replacement runs within 40 s of the freeze" within_s "$TOOK" 40
check "power loss: the replacement does not use it" job_avoids "$(job_of_attempt 2)" "$NODE"
# A ping of slurmctld (every SlurmdTimeout/3) may mark it not responding (*) in this window; only DOWN counts.
check "power loss: Slurm has not marked the frozen node down yet ($state)" sh -c "echo '$state' | grep -qvE 'down|drain'"
fault revive "$NODE" --timeout 30
wait_campaign 120
check "power loss: campaign completed" [ "$RC" -eq 0 ]
check "power loss: result equals a failure-free run's" result_is_exact
scenario_done

scenario "chain mode (--array=1-4%1): the second task's srun steps write their per-task heartbeats under attempt 2's path -> watched, not killed as hung"
user_campaign chainhb "--steps 300 --step-seconds 0.1 --ckpt-every 10 --fail-at-step 60 --fail-attempts 1"
# Attempt 2 trains for 24 s: well past a startup timeout of 15 s without a heartbeat where mlsup looks.
sed -i 's/^  time: "00:10:00"$/  time: "00:10:00"\n  array: "1-4%1"/; s/^  startup_timeout: 2m$/  startup_timeout: 15s/' "$CONF"
chown "$USER_NAME:" "$CONF"
run_campaign_as_user 150
echo "attempts: $(attempts); tasks: $(task_of_attempt 1) $(task_of_attempt 2)"
echo "attempt 1's per-task heartbeats: $(per_task_files 1)"
echo "attempt 2's per-task heartbeats: $(per_task_files 2)"
check "chain heartbeats: campaign completed" [ "$RC" -eq 0 ]
check "chain heartbeats: two attempts, each claimed by a task of one array" \
  sh -c '[ "$1" = "1 2 " ] && [ "$2" = "1 2" ]' - "$(attempts)" "$(claimed_attempts | paste -sd' ')"
check "chain heartbeats: one array for all of it" one_submission_for_all
check "chain heartbeats: attempt 2's srun steps wrote P.d/<node>.<rank> under attempt 2's path" per_task_named 2
check "chain heartbeats: they reached the end of the training (step 290 or later)" [ "$(per_task_max 2)" -ge 290 ]
check "chain heartbeats: nothing of attempt 2 went under attempt 1's path (its steps stop at 60)" [ "$(per_task_max 1)" -le 60 ]
check "chain heartbeats: no hang was detected" [ "$(event_count hang-detected)" -eq 0 ]
check "chain heartbeats: result equals a failure-free run's" result_is_exact
scenario_done

finish
