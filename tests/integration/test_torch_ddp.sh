#!/usr/bin/env bash
# Real PyTorch, real torchrun: a 2-node DDP training (gloo, CPU; examples/torch/ddp_train.py on
# mlsup_train) launched by the shipped torchrun template, supervised through the power loss of a
# node (frozen, on a cluster where Slurm needs 5 minutes to notice) and then the crash of a rank;
# then a rank stalled in Python (the hang's stacks name it) and a rank out of GPU memory (torch's
# own error: the evidence rule stops the campaign, `mlsup explain` finds the same offline); a rank
# that never joins the preflight (its node excluded); one node's address unreachable (gloo's own
# error names it: under srun a failure, under torchrun a hang; that node alone excluded); and, with
# no SPANK plugin (the helper writes a heartbeat per rank), a rank slow in its own compute (a
# straggler event).
# Final weights must be bitwise those of an uninterrupted run. A missing torch is a failure.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"
TRAINER="$REPO/examples/torch/ddp_train.py"  # new_campaign's script

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null || ! command -v torchrun >/dev/null; then
  echo "FAILED: torch is not importable by /usr/bin/python3, or torchrun is missing (Debian's python3-torch)"
  echo "0 passed, 1 failed"; exit 1
fi
export PYTHONPATH="$REPO/python${PYTHONPATH:+:$PYTHONPATH}"  # mlsup_train, for the jobs too (sbatch exports it)
ARGS="--steps 160 --ckpt-every 20 --step-seconds 0.15"

slow=$(mktemp -d /tmp/mlsup-torch-c300.XXXXXX)
ref=$(mktemp -d /tmp/mlsup-torch-ref.XXXXXX)
blocked=()  # the iptables rule that makes one node's address unreachable, while it holds
unblock() { [ ${#blocked[@]} -eq 0 ] || iptables -D OUTPUT "${blocked[@]}" 2>/dev/null || true; blocked=(); }
trap 'unblock; "$REPO/tests/cluster/cluster.sh" stop --dir "$slow" --clean >/dev/null 2>&1; rm -rf "$ref"' EXIT
trap 'exit 143' TERM INT  # the EXIT trap then runs: the iptables rule is not left behind
conf_line=$("$REPO/tests/cluster/cluster.sh" start --dir "$slow" --nodes 4 --slurmd-timeout 300) || {
  echo "FAILED: the SlurmdTimeout=300 cluster did not start"; echo "0 passed, 1 failed"; exit 1; }
export "$conf_line"

attempt_running() { local j; j=$(job_of_attempt "$1"); [ -n "$j" ] && [ "$(job_state "$j")" = RUNNING ]; }
# The checks of an attempt 1 that ended on evidence rule RULE quoting QUOTE, which excluded NODE and no
# other, and an attempt 2 without it: blamed_alone LABEL RULE QUOTE NODE.
blamed_alone() {
  check "$1: attempt 1 ended on the rule $2, quoting its line" has_event attempt-ended attempt=1 evidence_rule="$2" "evidence_quote~$3"
  check "$1: $4 excluded" has_event excluded "node=$4"
  check "$1: no other node excluded" [ "$(excluded_nodes | tr '\n' ' ')" = "$4 " ]
  check "$1: attempt 2 ran without it" sh -c "! echo '$(nodes_of "$(job_of_attempt 2)")' | grep -qx '$4'"
}
resume_step_of() { attempt_field "$1" resume_step; }

scenario "uninterrupted reference: 2 ranks started by hand on this machine (env://), no Slurm, no torchrun"
# The processes torchrun would start, without its agent: rank 0 hosts the store on a free port.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
for r in 0 1; do
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 \
    timeout 300 /usr/bin/python3 "$TRAINER" $ARGS --out "$ref" > "$ref/log.$r" 2>&1 &
  pids+=($!)
done
rcs=""
for p in "${pids[@]}"; do wait "$p"; rcs+=" $?"; done
echo "reference ranks exited:$rcs after $(( $(date +%s) - SCENARIO_T0 ))s"
check "reference: both ranks exited 0" [ "$rcs" = " 0 0" ]
check "reference: trained to the end" test -s "$ref/weights.sha256"
[ "$rcs" = " 0 0" ] || tail -n 15 "$ref"/log.*
echo "reference weights: $(cat "$ref/weights.sha256" 2>/dev/null)"
scenario_done

scenario "power loss of rank 1's node, then a crash of a rank -> three attempts, the same weights"
STEADY_TIMEOUT=20s SAVE_TIMEOUT=30s new_campaign ddp "$ARGS --out OUT --crash-file CRASH" "target:
  steps: 160"
sed -i -e 's|/srun.sbatch.tmpl$|/torchrun.sbatch.tmpl|' -e 's/^  nodes: 1$/  nodes: 2/' -e '/^  ntasks_per_node: 1$/d' \
  -e "s|--out OUT --crash-file CRASH|--out $CDIR/final --crash-file $CDIR/crash|" -e 's/^  script_args: \(.*\)$/  script_args: \1\n  nproc_per_node: 1/' "$CONF"
"$MLSUP" validate "$CONF" >/dev/null || { echo "FAILED: the campaign's config does not validate"; cat "$CONF"; }
start_campaign
wait_until 180 heartbeat_at_least 50 1
JOB=$(job_of_attempt 1)
NODE=$(nodes_of "$JOB" | tail -1)  # rank 1's node; the batch shell runs on the first
t0=$(date +%s)
"$REPO/tests/cluster/fault.sh" --dir "$slow" freeze "$NODE" >/dev/null 2>&1
wait_until 180 attempt_running 2
echo "froze $NODE of job $JOB at step $(heartbeat_of 1); attempt 2 RUNNING after $(( $(date +%s) - t0 ))s on $(nodes_of "$(job_of_attempt 2)" | tr '\n' ' ')"
check "power loss: the ledger holds the frozen node" sh -c "echo '$(excluded_nodes)' | grep -qx '$NODE'"
check "power loss: attempt 2 runs without it" sh -c "! echo '$(nodes_of "$(job_of_attempt 2)")' | grep -qx '$NODE'"
echo "stacks at the hang: $("$MLSUP" events "$CONF" --kind hang-stacks 2>&1 | tail -n 1 | cut -c1-400)"
check "power loss: at the hang the live rank gave its stacks, the frozen one none: the one waited on, on $NODE" \
  has_event hang-stacks attempt=1 ranks=2 dumped=1 "nodes=[\"$NODE\"]"
resumed=$(resume_step_of 2)
check "power loss: attempt 2 resumed from a checkpoint ($resumed)" [ "${resumed:-0}" -gt 0 ]
wait_until 180 heartbeat_at_least $(( ${resumed:-0} + 20 )) 2
touch "$CDIR/crash"  # before the frozen node's revive, which may take 30 s: attempt 2 could end meanwhile
echo "crash asked at attempt 2's step $(heartbeat_of 2)"
"$REPO/tests/cluster/fault.sh" --dir "$slow" revive "$NODE" --timeout 30 >/dev/null 2>&1
wait_campaign 420
check "campaign completed" [ "$RC" -eq 0 ]
check "the crash happened (a rank took the file)" test -e "$CDIR/crash.taken"
check "attempt 1 ended as a hang" has_event attempt-ended attempt=1 class=hang
check "attempt 2 ended as a failure" has_event attempt-ended attempt=2 class=failed
check "three attempts" [ "$(attempt_numbers | wc -l)" -eq 3 ]
[ "$(attempt_numbers | wc -l)" -eq 3 ] || "$MLSUP" events "$CONF" --kind attempt-ended 2>&1 | tail -n 6
check "attempt 3 resumed from a checkpoint" [ "$(resume_step_of 3)" -gt 0 ]
echo "weights after the faults: $(cat "$CDIR/final/weights.sha256" 2>/dev/null)"
check "the final weights are bitwise those of the uninterrupted run" \
  cmp -s "$ref/weights.sha256" "$CDIR/final/weights.sha256"
check "and so are the weights themselves, byte for byte" /usr/bin/python3 -c '
import sys, torch
a, b = (torch.load(p) for p in sys.argv[1:3])
sys.exit(not (a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)))' "$ref/weights.pt" "$CDIR/final/weights.pt"
scenario_done

scenario "rank 1 stalls in Python (its node is fine) -> a hang; every rank's stacks name rank 1, its node alone excluded"
STEADY_TIMEOUT=20s SAVE_TIMEOUT=30s new_campaign ddp-stall "$ARGS --out OUT --stall-file STALL" "target:
  steps: 160"
sed -i -e 's|/srun.sbatch.tmpl$|/torchrun.sbatch.tmpl|' -e 's/^  nodes: 1$/  nodes: 2/' -e '/^  ntasks_per_node: 1$/d' \
  -e "s|--out OUT --stall-file STALL|--out $CDIR/final --stall-file $CDIR/stall|" -e 's/^  script_args: \(.*\)$/  script_args: \1\n  nproc_per_node: 1/' "$CONF"
start_campaign
wait_until 180 heartbeat_at_least 30 1
touch "$CDIR/stall"
t0=$(date +%s)
wait_until 120 has_event hang-stacks attempt=1
# rank 1's node, as its own file's first line names it (torchrun's rendezvous places the ranks)
NODE=$(head -n 1 "$STATE/attempts/1/hang/rank-1.txt" | sed -n 's/^mlsup stacks: rank=1 node=\([^ ]*\) .*/\1/p')
check "stall: rank 1's file names its node ($NODE)" [ -n "$NODE" ]
echo "stall asked at step $(heartbeat_of 1); stacks told after $(( $(date +%s) - t0 ))s: $("$MLSUP" events "$CONF" --kind hang-stacks 2>&1 | tail -n 1 | cut -c1-400)"
check "stall: both ranks gave their stacks at the hang" has_event hang-stacks attempt=1 ranks=2 dumped=2
check "stall: the stacks single out rank 1, on $NODE" has_event hang-stacks attempt=1 'waited_on=["1"]' "nodes=[\"$NODE\"]"
check "stall: rank 1 is told where it stopped (stall_if_asked)" has_event hang-stacks attempt=1 'places~rank 1: torch/ddp_train.py'
check "stall: rank 1's file holds its stack" grep -q 'in stall_if_asked' "$STATE/attempts/1/hang/rank-1.txt"
check "stall: rank 0's file holds a stack inside torch" grep -q 'dist-packages/torch/' "$STATE/attempts/1/hang/rank-0.txt"
wait_campaign 300
check "stall: campaign completed" [ "$RC" -eq 0 ]
check "stall: attempt 1 ended as a hang" has_event attempt-ended attempt=1 class=hang
check "stall: $NODE excluded on the stacks' word" has_event excluded "node=$NODE" "reason~the hang's stacks"
check "stall: no other node excluded" [ "$(excluded_nodes | tr '\n' ' ')" = "$NODE " ]
check "stall: attempt 2 resumed from a checkpoint" [ "$(resume_step_of 2)" -gt 0 ]
check "stall: the final weights are bitwise those of the uninterrupted run" cmp -s "$ref/weights.sha256" "$CDIR/final/weights.sha256"
[ "$RC" -eq 0 ] || tail -n 20 "$CDIR/run.out"
scenario_done
scenario "rank 1 runs out of GPU memory (torch's own error) -> the rule stops the campaign after one attempt, no node blamed"
new_campaign ddp-oom "$ARGS --out OUT --oom-file OOM"
sed -i -e 's|/srun.sbatch.tmpl$|/torchrun.sbatch.tmpl|' -e 's/^  nodes: 1$/  nodes: 2/' -e '/^  ntasks_per_node: 1$/d' \
  -e "s|--out OUT --oom-file OOM|--out $CDIR/final --oom-file $CDIR/oom|" -e 's/^  script_args: \(.*\)$/  script_args: \1\n  nproc_per_node: 1/' "$CONF"
touch "$CDIR/oom"
start_campaign
wait_campaign 240
check "oom: the campaign stopped for a person (exit 13)" [ "$RC" -eq 13 ]
check "oom: rank 1 raised it" test -e "$CDIR/oom.taken"
check "oom: one attempt, not retried" [ "$(attempt_numbers | wc -l)" -eq 1 ]
check "oom: the ending names the rule and quotes torch's line" \
  has_event attempt-ended attempt=1 evidence_rule=cuda_oom 'evidence_quote~CUDA out of memory. Tried to allocate 2.00 GiB'
check "oom: no node excluded" [ "$(exclusion_count)" -eq 0 ]
explained=$("$MLSUP" explain "$CONF" --attempt 1 --json 2>"$CDIR/explain.err")
echo "explain: $(echo "$explained" | cut -c1-300)"
check "oom: explain finds the same rule offline, and the decision recorded at the ending" /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
sys.exit(not (j["rule"] == "cuda_oom" and j["action"] == "stop_alert" and j["at_ending"]["evidence_rule"] == "cuda_oom"))' "$explained"
[ "$RC" -eq 13 ] || tail -n 20 "$CDIR/run.out"
scenario_done

scenario "preflight (python3 -m mlsup_train.preflight, gloo): attempt 1's rank 1 never joins -> its node named, excluded, attempt 2 trains without it"
new_campaign ddp-preflight "$ARGS --out OUT" "target:
  steps: 160
preflight:
  command: 'if [ \"\$MLSUP_ATTEMPT\" = 1 ] && [ \"\$SLURM_PROCID\" = 1 ]; then sleep 600; fi; exec /usr/bin/python3 -m mlsup_train.preflight'
  deadline: 15s"
sed -i -e 's|/srun.sbatch.tmpl$|/torchrun.sbatch.tmpl|' -e 's/^  nodes: 1$/  nodes: 2/' -e '/^  ntasks_per_node: 1$/d' \
  -e "s|--out OUT|--out $CDIR/final|" -e 's/^  script_args: \(.*\)$/  script_args: \1\n  nproc_per_node: 1/' "$CONF"
"$MLSUP" validate "$CONF" >/dev/null || { echo "FAILED: the campaign's config does not validate"; cat "$CONF"; }
start_campaign
wait_campaign 300
NODE=$(nodes_of "$(job_of_attempt 1)" | sed -n 2p)  # task R of the preflight runs on the job's node R
echo "attempt 1 on $(nodes_of "$(job_of_attempt 1)" | tr '\n' ' '); attempt 2 on $(nodes_of "$(job_of_attempt 2)" | tr '\n' ' ')"
echo "ending: $("$MLSUP" events "$CONF" --kind attempt-ended 2>&1 | head -n 1 | cut -c1-400)"
check "preflight: campaign completed" [ "$RC" -eq 0 ]
blamed_alone preflight preflight_absent "rank 1 on $NODE did not join within 15 s" "$NODE"
check "preflight: two attempts" [ "$(attempt_numbers | wc -l)" -eq 2 ]
check "preflight: the final weights are bitwise those of the uninterrupted run" cmp -s "$ref/weights.sha256" "$CDIR/final/weights.sha256"
explained=$("$MLSUP" explain "$CONF" --attempt 1 --json 2>"$CDIR/explain.err")
check "preflight: explain finds the same rule and node offline" /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
sys.exit(not (j["rule"] == "preflight_absent" and j["at_ending"]["evidence_rule"] == "preflight_absent"))' "$explained"
[ "$RC" -eq 0 ] || tail -n 20 "$CDIR/run.out"
scenario_done

scenario "a real gloo connection failure: one node's address unreachable (iptables; each node has an address of its own) -> that node excluded, no other; attempt 2 trains without it; under torchrun (a hang) the same"
addrs=$(mktemp -d /tmp/mlsup-torch-addrs.XXXXXX)
chmod 0755 "$addrs"  # munged and slurmd read below it
saved_conf=$SLURM_CONF
if ! command -v iptables >/dev/null; then
  check "gloo address: iptables is installed (scripts/install-deps.sh --tests)" false
elif conf_line=$("$REPO/tests/cluster/cluster.sh" start --dir "$addrs/cluster" --nodes 4 --node-addrs); then
  export "$conf_line"
  # A 3-node job on this idle cluster runs on its first three nodes; gloo's pair with the higher address
  # connects to the lower, so the third node's rank connects to the second's: its address is made
  # unreachable for every TCP connection but its slurmd's (Slurm keeps reaching the node).
  NODE=$(sinfo -h -N -o %N | sort -uV | sed -n 2p)
  ADDR=$(scontrol -o show node "$NODE" | sed -n 's/.* NodeAddr=\([^ ]*\).*/\1/p')
  PORT=$(( $(sed -n 's/^SLURMD_PORT=//p' "$addrs/cluster/cluster.info") + 1 ))
  rule=(-d "$ADDR/32" -p tcp ! --dport "$PORT" -j REJECT --reject-with icmp-host-unreachable)
  blocked=("${rule[@]}")
  iptables -A OUTPUT "${blocked[@]}"
  # The srun template, a rank per task: the failed rank ends the step (--kill-on-bad-exit). Under torchrun
  # the agents would wait in their exit barrier for the rank still waiting on its peers.
  new_campaign ddp-addr "--steps 60 --ckpt-every 20 --step-seconds 0.1 --out OUT --node-addr-group" "target:
  steps: 60"
  sed -i -e 's/^  nodes: 1$/  nodes: 3/' -e "s|--out OUT|--out $CDIR/final|" "$CONF"
  PATH=/usr/bin:$PATH start_campaign  # the template's python3: Debian's, with torch
  wait_campaign 300
  unblock
  echo "$NODE has address $ADDR; attempt 1 on $(nodes_of "$(job_of_attempt 1)" | tr '\n' ' '); attempt 2 on $(nodes_of "$(job_of_attempt 2)" | tr '\n' ' ')"
  echo "ending: $("$MLSUP" events "$CONF" --kind attempt-ended 2>&1 | head -n 1 | cut -c1-500)"
  check "gloo address: attempt 1 ran on $NODE" sh -c "echo '$(nodes_of "$(job_of_attempt 1)")' | grep -qx '$NODE'"
  check "gloo address: campaign completed" [ "$RC" -eq 0 ]
  blamed_alone "gloo address" gloo_connect "connect [$ADDR]:" "$NODE"  # the address mapped through Slurm's NodeAddr
  check "gloo address: trained to the end" test -s "$CDIR/final/weights.sha256"
  explained=$("$MLSUP" explain "$CONF" --attempt 1 --json 2>"$CDIR/explain.err")
  check "gloo address: explain finds the same rule and address offline" /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[1])
sys.exit(not (j["rule"] == "gloo_connect" and j["captured"] == sys.argv[2] and j["at_ending"]["evidence_rule"] == "gloo_connect"))' \
    "$explained" "$ADDR"
  [ "$RC" -eq 0 ] || tail -n 20 "$CDIR/run.out"
  # Under torchrun the rank that failed to connect is gone, while its agent waits in its exit barrier
  # for the others, which wait on it: a hang whose stacks point at the dead rank's node. The output's
  # line names the unreachable node: that one is excluded, not the dead rank's.
  blocked=("${rule[@]}")
  iptables -A OUTPUT "${blocked[@]}"
  STEADY_TIMEOUT=30s new_campaign ddp-addr-tr "--steps 60 --ckpt-every 20 --step-seconds 0.1 --out OUT --node-addr-group" "target:
  steps: 60"
  sed -i -e 's|/srun.sbatch.tmpl$|/torchrun.sbatch.tmpl|' -e 's/^  nodes: 1$/  nodes: 3/' -e '/^  ntasks_per_node: 1$/d' \
    -e "s|--out OUT|--out $CDIR/final|" -e 's/^  script_args: \(.*\)$/  script_args: \1\n  nproc_per_node: 1/' \
    -e 's/^  save_timeout: \(.*\)$/  save_timeout: \1\n  stacks_wait: 3s/' "$CONF"
  PATH=/usr/bin:$PATH start_campaign
  wait_campaign 300
  unblock
  echo "hang: $("$MLSUP" events "$CONF" --kind hang-stacks 2>&1 | head -n 1 | cut -c1-300)"
  echo "explained: $("$MLSUP" events "$CONF" --kind hang-explained 2>&1 | head -n 1 | cut -c1-300)"
  check "gloo address, torchrun: attempt 1 ran on $NODE" sh -c "echo '$(nodes_of "$(job_of_attempt 1)")' | grep -qx '$NODE'"
  check "gloo address, torchrun: attempt 1 ended as a hang" has_event attempt-ended attempt=1 class=hang
  check "gloo address, torchrun: the hang's output explained by gloo_connect, naming $NODE" \
    has_event hang-explained attempt=1 rule=gloo_connect "node=$NODE" "quote~connect [$ADDR]:"
  check "gloo address, torchrun: campaign completed" [ "$RC" -eq 0 ]
  blamed_alone "gloo address, torchrun" gloo_connect "connect [$ADDR]:" "$NODE"
  check "gloo address, torchrun: explain shows the rule the hang's ending recorded" /usr/bin/python3 -c '
import json, sys
sys.exit(json.loads(sys.argv[1])["at_ending"].get("evidence_rule") != "gloo_connect")' "$("$MLSUP" explain "$CONF" --attempt 1 --json 2>/dev/null)"
  [ "$RC" -eq 0 ] || tail -n 20 "$CDIR/run.out"
else
  check "gloo address: the cluster with an address per node started" false
fi
unblock
"$REPO/tests/cluster/cluster.sh" stop --dir "$addrs/cluster" --clean >/dev/null 2>&1
export SLURM_CONF=$saved_conf
rm -rf "$addrs"
scenario_done

scenario "rank 1 slow in its own compute (no SPANK plugin: the helper writes a heartbeat per rank) -> one straggler event naming its node, nothing else done"
new_campaign ddp-straggler "--steps 120 --ckpt-every 40 --step-seconds 0.1 --out OUT --slow-file SLOW --slow-seconds 0.25" "target:
  steps: 120
stragglers:
  slower_by: 50
  for: 10s"
sed -i -e 's|/srun.sbatch.tmpl$|/torchrun.sbatch.tmpl|' -e 's/^  nodes: 1$/  nodes: 2/' -e '/^  ntasks_per_node: 1$/d' \
  -e "s|--out OUT --slow-file SLOW|--out $CDIR/final --slow-file $CDIR/slow|" -e 's/^  script_args: \(.*\)$/  script_args: \1\n  nproc_per_node: 1/' "$CONF"
touch "$CDIR/slow"
start_campaign
wait_until 150 has_event straggler attempt=1
rm -f "$CDIR/slow"
echo "straggler: $("$MLSUP" events "$CONF" --kind straggler 2>&1 | tail -n 1 | cut -c1-400)"
echo "per-rank heartbeat files: $(ls "$STATE/heartbeats/attempt-1.d" 2>/dev/null | tr '\n' ' ')"
out=$(scontrol -o show job "$(job_of_attempt 1)" | sed -n 's/.* StdErr=\([^ ]*\).*/\1/p')
NODE=$(sed -n 's/.*rank 1 on \([^:]*\): slow in its compute.*/\1/p' "$out" | head -n 1)
check "straggler: rank 1 told its node ($NODE)" [ -n "$NODE" ]
check "straggler: the event names rank 1's node" has_event straggler attempt=1 "node=$NODE"
wait_campaign 240
check "straggler: campaign completed" [ "$RC" -eq 0 ]
check "straggler: told once" [ "$(event_count straggler)" -eq 1 ]
check "straggler: in one attempt" [ "$(attempt_numbers | wc -l)" -eq 1 ]
check "straggler: no node excluded (it is told, not acted on)" [ "$(exclusion_count)" -eq 0 ]
check "straggler: trained to the end" test -s "$CDIR/final/weights.sha256"
[ "$RC" -eq 0 ] || tail -n 20 "$CDIR/run.out"
scenario_done
finish
