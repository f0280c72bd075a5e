#!/usr/bin/env bash
# Wide jobs on a private cluster of 66 slurmd (SlurmdTimeout=10), with the test trainer, one rank per
# node: a 64-node job with a spare loses one training node to a power loss and only that node is
# excluded, the run going on inside the same job; a 65-node request that the cluster can no longer
# hold (its batch host crashed, two nodes drained) drops its spare, is CRITICAL in `mlsup check`
# within a minute, and starts by itself once an admin resumes the drained nodes.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

WIDTH=${MLSUP_WIDTH:-64}
wide=$(mktemp -d /tmp/mlsup-width.XXXXXX)
trap '"$REPO/tests/cluster/cluster.sh" stop --dir "$wide" --clean >/dev/null 2>&1' EXIT
t_start=$(date +%s)
conf_line=$("$REPO/tests/cluster/cluster.sh" start --dir "$wide" --nodes $((WIDTH + 2)) --slurmd-timeout 10) || {
  echo "FAILED: the cluster of $((WIDTH + 2)) slurmd did not start"; echo "0 passed, 1 failed"; exit 1; }
export "$conf_line"
echo "$((WIDTH + 2)) slurmd up in $(( $(date +%s) - t_start ))s"

fault() { "$REPO/tests/cluster/fault.sh" --dir "$wide" "$@" >/dev/null 2>&1; }
batch_host_of() { scontrol -o show job "$1" | grep -o ' BatchHost=[^ ]*' | cut -d= -f2; }
job_running() { local j; j=$(job_of_attempt "$1"); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }
job_pending() { local j; j=$(job_of_attempt "$1"); [ -n "$j" ] && [ "$(job_state "$j")" = PENDING ]; }
check_critical() { "$MLSUP" check "$CONF" > "$CDIR/check.out" 2>&1; [ $? -eq 2 ] && grep -q "asks $WIDTH nodes" "$CDIR/check.out"; }
all_usable() { ! sinfo -h -N -o '%T' | grep -v -e '^idle$' -e '^allocated$' -e '^mixed$' >/dev/null; }
resume_all() { scontrol update NodeName="$(sinfo -h -N -o %N | sort -uV | paste -sd,)" State=RESUME 2>/dev/null || true; }

wide_campaign() {
  new_campaign "$1" "--steps 100 --step-seconds 0.2 --ckpt-every 10"
  sed -i "s/^  nodes: 1\$/  nodes: $WIDTH\n  spare_nodes: 1/" "$CONF"
  sed -i 's/^  steady_timeout: .*$/  steady_timeout: 8s/; s/^  save_timeout: .*$/  save_timeout: 15s/' "$CONF"
  start_campaign
  wait_until 180 heartbeat_at_least 20 || echo "the training did not reach step 20: $(tail -n 3 "$CDIR/run.out")"
  JOB=$(job_of_attempt 1)
  HOST=$(batch_host_of "$JOB")
}

scenario "$WIDTH nodes + 1 spare, power loss of one training node -> that node alone is excluded, the training goes on inside the same job, exact"
wide_campaign width-freeze
VICTIM=$(nodes_of "$JOB" | grep -vx "$HOST" | sed -n 7p)
at=$(date +%s.%N)
fault freeze "$VICTIM"
echo "froze $VICTIM of job $JOB (the batch host is $HOST) at step $(heartbeat_of 1)"
wait_until 120 job_running 2
echo "attempt 2 runs in job $(job_of_attempt 2) $(seconds_since "$at") s after the freeze; mlsup's events since:"
events_since "$at"
class1=$(attempt_field 1 class)
check "attempt 1 ended as a hang (mlsup's probe) or a node failure (Slurm's SlurmdTimeout came first): $class1" \
  sh -c "[ '$class1' = hang ] || [ '$class1' = node_fail ]"
check "no healthy node excluded (the ledger: $(excluded_nodes | paste -sd,))" sh -c "[ -z \"\$(echo '$(excluded_nodes)' | grep -vx '$VICTIM')\" ]"
check "attempt 2 runs in the same job" [ "$(job_of_attempt 2)" = "$JOB" ]
fault revive "$VICTIM" --timeout 30
wait_campaign 300
check "campaign completed" [ "$RC" -eq 0 ]
check "one sbatch for the whole campaign" [ "$(sbatch_count)" -eq 1 ]
check "result equals a failure-free run's" result_is_exact
result_is_exact || { echo "how each training process ended:"; trainer_endings | sed 's/^/  | /'; }
scontrol update NodeName="$VICTIM" State=RESUME 2>/dev/null
wait_until 60 all_usable || resume_all
scenario_done

scenario "$WIDTH nodes + 1 spare, two nodes drained, then the batch host crashes -> the spare is dropped, check is CRITICAL with the shortfall within a minute, the campaign resumes once an admin resumes the drained nodes"
wide_campaign width-short
mapfile -t drained < <( (sinfo -h -N -t idle -o %N; nodes_of "$JOB" | grep -vx "$HOST") | sort -uV | head -n 2)
scontrol update NodeName="$(IFS=,; echo "${drained[*]}")" State=DRAIN Reason="Kill task failed" || echo "the drain failed"
at=$(date +%s.%N)
fault crash "$HOST"
echo "drained ${drained[*]}; crashed the batch host $HOST of job $JOB"
wait_until 120 job_pending 2
pending_at=$(date +%s.%N)
echo "attempt 2's job $(job_of_attempt 2) pending $(seconds_since "$at") s after the crash"
wait_until 90 check_critical
echo "check CRITICAL $(seconds_since "$pending_at") s after the job was submitted: $(cat "$CDIR/check.out")"
check "check is CRITICAL, the spare dropped, within 60 s of the submission" \
  python3 -c "import sys; sys.exit(not float(sys.argv[1]) <= 60)" "$(seconds_since "$pending_at")"
check "check names the shortfall" grep -q "asks $WIDTH nodes, $((WIDTH - 1)) usable" "$CDIR/check.out"
check "the spare was dropped first (spares-dropped)" has_event spares-dropped attempt=2
check "the shortfall was told once (capacity-short)" [ "$(event_count capacity-short attempt=2)" -eq 1 ]
scontrol update NodeName="$(IFS=,; echo "${drained[*]}")" State=RESUME
echo "resumed ${drained[*]}"
wait_until 120 job_running 2
# mlsup tells it on its first poll that sees the nodes usable or the job started, which may come after
# the test's own look at the job.
wait_until 20 has_event capacity-restored attempt=2
check "the campaign went on by itself once the nodes were resumed (capacity-restored)" has_event capacity-restored attempt=2
fault revive "$HOST" --timeout 30
wait_campaign 300
check "campaign completed" [ "$RC" -eq 0 ]
check "result equals a failure-free run's" result_is_exact
check "no healthy node was excluded ($(excluded_nodes | paste -sd,))" [ "$(excluded_nodes)" = "$HOST" ]
scenario_done
finish
