#!/usr/bin/env bash
# Recovery without waiting that buys nothing, on the live cluster without the SPANK plugin:
# (a) a sticky bad node (the trainer crashes whenever rank 0 or 1 runs there) is excluded after its
#     first failure, on srun's report alone, the next attempt is submitted at once, and the campaign
#     completes with the exact result;
# (b) the guard: the trainer crashes at step 30 on whichever node runs rank 1; the node excluded at
#     the first failure gets its exclusion lifted when the failure shows on another node, no node is
#     excluded after that, and the crash-loop rule stops the campaign (exit 11);
# (c) by hand: `mlsup exclusions` lists the node rank 1's crash excluded, with its evidence; `mlsup
#     unexclude` lifts it (carried out by the `mlsup run` holding the campaign, journaled with who and
#     why), and the next attempt is submitted without it and may run on it; it runs with the debug
#     environment (attempt 1's failure said nothing an evidence rule reads);
# (d) rank 1's training process killed by hand (kill -9): srun reports it Killed first, which names no
#     node, so nothing is excluded and the resumed campaign completes exactly.
# Each scenario has a hard limit; the suite prints its wall time (about 75 s here).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

faults=$(mktemp -d /tmp/mlsup-recovery-faults.XXXXXX)
trap 'rm -rf "$faults"' EXIT
export MLSUP_FAULT_DIR=$faults  # the trainer crashes on nodes marked in $faults/sticky-bad
# The partition's nodes in order (Slurm fills the lowest first), one per line.
all_nodes() { sinfo -h -N -o '%N' | sort -uV; }
# Live exclusions (status --json), one per line, sorted.
live_exclusions() { status_query 'sorted({x["node"] for x in s["exclusions"] if x["live"]})'; }
# Seconds from attempt N's ending event to attempt N+1's submission (event log times).
gap_after() {
  "$MLSUP" events "$CONF" --json | /usr/bin/python3 -c 'import json, sys
n = int(sys.argv[1])
ev = [json.loads(l) for l in sys.stdin if l.strip()]
end = next(e["time"] for e in ev if e.get("event") == "attempt-ended" and e.get("attempt") == n)
sub = next(e["time"] for e in ev if e.get("event") == "submitted" and e.get("attempt") == n + 1)
print(f"{sub - end:.1f}")' "$1"
}
two_nodes() { sed -i 's/^  nodes: 1$/  nodes: 2/' "$CONF"; }
# A Python expression over `mlsup exclusions --json` (x), printed: exclusions_query EXPR
exclusions_query() {
  "$MLSUP" exclusions "$CONF" --json | /usr/bin/python3 -c 'import json,sys; x = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}
# Exclusions whose fields match, as `mlsup exclusions --json` lists them: listed_count [KEY=VALUE|KEY~TEXT]...
listed_count() { "$MLSUP" exclusions "$CONF" --json | count_where --in exclusions "$@"; }
# The Python expression over `mlsup render --json` (r) of the next attempt, printed: next_attempt EXPR
next_attempt() {
  "$MLSUP" render "$CONF" --json | /usr/bin/python3 -c 'import json,sys; r = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}
below() { /usr/bin/python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$1" "$2"; }

scenario "(a) sticky bad node, no plugin -> excluded after its first failure, resubmitted at once, exact result"
NODE=$(all_nodes | head -1)
mkdir -p "$faults/sticky-bad" && : > "$faults/sticky-bad/$NODE"
new_campaign sticky-first "--steps 60 --step-seconds 0.05 --ckpt-every 10"
two_nodes
sed -i 's/^  backoff_initial: 1s$/  backoff_initial: 10s/; s/^  backoff_max: 2s$/  backoff_max: 20s/' "$CONF"  # a wait would show
run_campaign 90
rm -f "$faults/sticky-bad/$NODE"
echo "attempts: $(attempt_numbers | tr '\n' ' '); exclusions: $(excluded_nodes | tr '\n' ' '); gap after attempt 1: $(gap_after 1)s"
check "(a) campaign completed" [ "$RC" -eq 0 ]
check "(a) two attempts: the node was excluded after its first failure" [ "$(attempt_numbers | tr '\n' ' ')" = "1 2 " ]
check "(a) the ledger holds exactly the sticky node" [ "$(excluded_nodes)" = "$NODE" ]
check "(a) by the first-evidence rule, on srun's report" has_event excluded node="$NODE" rule=first_evidence reason~"srun's report"
check "(a) attempt 2 avoids it" sh -c "! { scontrol show hostnames \"\$(scontrol -o show job $(job_of_attempt 2) | grep -o ' NodeList=[^ ]*' | cut -d= -f2)\" | grep -qx '$NODE'; }"
check "(a) attempt 1's ending waited for nothing (delay 0, new exclusion)" has_event attempt-ended attempt=1 delay=0.0 new_exclusion=true
check "(a) attempt 2 was submitted within 3 s of attempt 1's end ($(gap_after 1)s)" below "$(gap_after 1)" 3
check "(a) result equals a failure-free run's" result_is_exact
scenario_done

scenario "(b) a crash that follows rank 1 to another node -> the exclusion is lifted, no node excluded, crash loop stops"
new_campaign follows "--steps 100 --step-seconds 0.05 --ckpt-every 10 --fail-at-step 30 --fault-ranks 1"
two_nodes
run_campaign 120
echo "attempts: $(attempt_numbers | tr '\n' ' '); exclusions ever: $(excluded_nodes | tr '\n' ' '); live: $(live_exclusions | tr '\n' ' ')"
"$MLSUP" events "$CONF" | grep -E 'excluded|exclusion-lifted|attempt-ended' | cut -c1-200
check "(b) the crash loop stopped the campaign (exit 11)" [ "$RC" -eq 11 ]
check "(b) the first failure's node was excluded by the first-evidence rule" has_event excluded attempt=1 rule=first_evidence
check "(b) attempt 2's failure on another node lifted it" has_event exclusion-lifted attempt=2 rank=1
check "(b) one node was ever excluded, and none is now" [ "$(excluded_nodes | wc -l):$(live_exclusions | wc -l)" = "1:0" ]
check "(b) no exclusion after attempt 1" [ "$(event_count excluded)" -eq 1 ]
check "(b) the failures after it follow the training" [ "$(event_count attempt-ended follows_training=true)" -ge 2 ]
scenario_done

scenario "(c) exclusions lists the node rank 1's crash excluded, with its evidence; unexclude lifts it under mlsup run; the next attempt runs without it"
new_campaign unexclude "--steps 60 --step-seconds 0.2 --ckpt-every 10 --fail-at-step 25 --fail-attempts 1 --fault-ranks 1"
two_nodes
start_campaign
wait_until 60 heartbeat_at_least 3
verb pause "$CONF"  # attempt 1's end then starts nothing: the exclusion stays live until lifted by hand
check "(c) pause exits 0, carried out by the run" sh -c "[ $VRC -eq 0 ] && grep -q 'holds campaign' '$CDIR/verb.out'"
one_live() { [ "$(exclusions_query 'x["live"]')" = 1 ]; }
check "(c) attempt 1 failed and excluded one node" wait_until 60 one_live
NODE=$(exclusions_query 'x["exclusions"][0]["node"]')
"$MLSUP" exclusions "$CONF" | cut -c1-200
check "(c) exclusions --json: $NODE, live, by the first-evidence rule on rank 1, after attempt 1 (job $(job_of_attempt 1), failed)" \
  [ "$(listed_count node="$NODE" live=true attempt=1 class=failed rule=first_evidence rank=1 job_id="$(job_of_attempt 1)" lifted=null)" -eq 1 ]
check "(c) the next attempt would exclude it (render --json)" [ "$(next_attempt 'r["exclude"]')" = "['$NODE']" ]
verb unexclude "$CONF" no-such-node
check "(c) unexclude of a node not excluded: exit 19, naming the live one" sh -c "[ $VRC -eq 19 ] && grep -q 'the live exclusions are $NODE' '$CDIR/verb.out'"
verb unexclude "$CONF" "$NODE" --why "repaired by hand"
check "(c) unexclude exits 0, carried out by the run" sh -c "[ $VRC -eq 0 ] && grep -q 'holds campaign' '$CDIR/verb.out'"
lifted_by_hand() { [ "$(listed_count node="$NODE" live=false lifted.how=unexcluded lifted.by~@ "lifted.why=repaired by hand")" -eq 1 ]; }
check "(c) exclusions shows it lifted, by whom and why" wait_until 30 lifted_by_hand
check "(c) the unexcluded event names the node and the reason" has_event unexcluded node="$NODE" "why=repaired by hand" verb=unexclude
check "(c) the next attempt would exclude nothing (render --json)" [ "$(next_attempt 'r["exclude"]')" = "[]" ]
verb resume "$CONF"
wait_campaign 90
check "(c) the resumed campaign completed" [ "$RC" -eq 0 ]
check "(c) attempt 2 was submitted without --exclude" has_event submitted attempt=2 exclude=[]
check "(c) attempt 2 ran on $NODE again" sh -c "scontrol show hostnames \"\$(scontrol -o show job $(job_of_attempt 2) | grep -o ' NodeList=[^ ]*' | cut -d= -f2)\" | grep -qx '$NODE'"
check "(c) result equals a failure-free run's" result_is_exact
# Attempt 1's failure said nothing a rule reads: attempt 2 ran with the debug environment, every rank.
debug_seen() { python3 -c 'import json, sys
seen = {}
for r in map(json.loads, filter(str.strip, open(sys.argv[1]))):
    env = r.get("debug_env", {})
    seen.setdefault(r["attempt"], set()).add("%s/%s:%s" % (r["rank"], env.get("NCCL_DEBUG"), env.get("TORCH_DISTRIBUTED_DEBUG")))
print(" ".join("%s=%s" % (a, ",".join(sorted(v))) for a, v in sorted(seen.items())))' "$STATE/trainer-log.jsonl"; }
attempt2_says_why() { case "$(attempt_field 2 debug)" in *"attempt 1 ended as failed and no evidence rule explains it"*) return 0;; esac; return 1; }
echo "the debug variables each training process saw (attempt=rank/NCCL_DEBUG:TORCH_DISTRIBUTED_DEBUG): $(debug_seen)"
check "(c) attempt 2 says why it debugs (status --json)" attempt2_says_why
check "(c) attempt 1 ran without the debug environment, both of attempt 2's ranks with it" \
  sh -c "case '$(debug_seen)' in 1=*INFO*' 2='*) exit 1;; 1=*' 2=0/INFO:DETAIL,1/INFO:DETAIL') exit 0;; esac; exit 1"
scenario_done

scenario "(d) rank 1 killed by hand (kill -9) -> no node excluded, not even its own; resumed, exact result"
new_campaign killed "--steps 60 --step-seconds 0.2 --ckpt-every 10"
two_nodes
start_campaign
wait_until 60 heartbeat_at_least 15
# The training process of rank 1 of attempt 1's job (on this machine: the local cluster's nodes share it).
rank_pid() {
  local job=$1 rank=$2 p env
  for p in $(pgrep -f "$TRAINER"); do
    env=$(tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null) || continue
    grep -qx "SLURM_JOB_ID=$job" <<<"$env" && grep -qx "SLURM_PROCID=$rank" <<<"$env" && { echo "$p"; return; }
  done
}
victim=$(rank_pid "$(job_of_attempt 1)" 1)
echo "killing rank 1 of job $(job_of_attempt 1): pid ${victim:-none}"
[ -n "$victim" ] && kill -9 "$victim"
wait_campaign 90
echo "attempts: $(attempt_numbers | tr '\n' ' '); exclusions: $(excluded_nodes | tr '\n' ' ')"
"$MLSUP" events "$CONF" | grep -E 'excluded|attempt-ended' | cut -c1-200
check "(d) campaign completed" [ "$RC" -eq 0 ]
check "(d) attempt 1 failed: srun reported rank 1 Killed first" \
  [ "$(status_query 'next(a["class"] for a in s["history"] if a["number"] == 1)')" = failed ]
check "(d) no node was excluded" [ -z "$(excluded_nodes)" ]
check "(d) no excluded event" [ "$(event_count excluded)" -eq 0 ]
check "(d) result equals a failure-free run's" result_is_exact
scenario_done

finish
