#!/usr/bin/env bash
# The first hour of a new user, scripted: a campaign written from the README alone, with the mistakes
# people make first (a template without #!, a late #SBATCH line, a config that overrides the script,
# a quoted placeholder, a missing variable, a mistyped command, validate on a folder, events before
# the first run, no SLURM_CONF, a job that can never start), each message and exit code checked;
# then the mistakes fixed and the campaign run to completion on the live cluster, with `render`
# compared against the next attempt's real submission; `mlsup init`'s srun and torchrun starters, given
# a training, run to completion. Hard timeout 240 s; prints its wall time.
set -uo pipefail
if [ -z "${FIRST_HOUR_TIMED:-}" ]; then
  FIRST_HOUR_TIMED=1 exec timeout -k 5 240 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

T=$(mktemp -d /tmp/mlsup-first-hour.XXXXXX)
NAME="first-hour-$$"
cleanup() {
  scancel --quiet --name="$NAME" 2>/dev/null
  for id in $(squeue -h -o '%i %k' 2>/dev/null | awk -v n="mlsup:$NAME" 'index($2, n) == 1 { print $1 }'); do
    scancel "$id" 2>/dev/null
  done
  rm -rf "$T"
}
trap cleanup EXIT

# Runs mlsup (bounded) and keeps what it said: said ARGS... sets RC and SAID (stdout and stderr).
said() {
  SAID=$(timeout 60 "$MLSUP" "$@" 2>&1)
  RC=$?
}
# True when the last SAID contains TEXT.
says() { grep -qF -- "$1" <<<"$SAID" || { echo "  (said: ${SAID:0:600})"; return 1; }; }

cd "$T" || exit 1

scenario "mistakes: each message says where and what to do"
# The README's campaign, written by hand: the template starts with its #SBATCH lines, no #!.
cat > train.sbatch <<'EOF'
#SBATCH --nodes=3
#SBATCH --time=00:10:00
srun python3 "{{vars.script}}" {{vars.script_args}}
#SBATCH --ntasks-per-node=1
EOF
cat > campaign.yaml <<EOF
name: $NAME
template: train.sbatch
vars: {script: $TRAINER}
slurm: {nodes: 1}
EOF
said validate campaign.yaml
check "missing vars.script_args: validate exits 3" [ "$RC" -eq 3 ]
check "missing vars.script_args: says to add it under vars:" says "vars.script_args: undefined variable (add it under \`vars:\`"
sed -i "s|^vars: .*|vars: {script: $TRAINER, script_args: --steps 40}|" campaign.yaml
said validate campaign.yaml
check "no #!: validate exits 3" [ "$RC" -eq 3 ]
check "no #!: the error is at train.sbatch:1:1" says "train.sbatch:1:1: #!: the script does not start with a #! line"
sed -i '1i #!/bin/bash' train.sbatch
said validate campaign.yaml
check "warnings: validate passes (exit 0)" [ "$RC" -eq 0 ]
check "late #SBATCH: a warning at its line" says "train.sbatch:5:1: #SBATCH: comes after the script's first command, so sbatch ignores it"
check "the config overrides the script's --nodes=3: told" says "\"3\" here is overridden by slurm.nodes: 1"
check "quoted placeholder: a warning" says "a placeholder inside quotes"
said statsu campaign.yaml
check "mistyped command: exit 2" [ "$RC" -eq 2 ]
check "mistyped command: did you mean status" says 'no command "statsu" (did you mean "status"?)'
said validate "$T"
check "validate on a folder: exit 3" [ "$RC" -eq 3 ]
check "validate on a folder: says it is a folder" says "a folder, not a config file"
said events campaign.yaml
check "events before the first run: exit 0, says it has not run" bash -c "[ $RC -eq 0 ] && grep -q 'has not run' <<<\"\$0\"" "$SAID"
SAID=$(env -u SLURM_CONF timeout 60 "$MLSUP" tick campaign.yaml 2>&1); RC=$?
check "no SLURM_CONF: tick exits 1" [ "$RC" -eq 1 ]
check "no SLURM_CONF: says what to set" says "SLURM_CONF is not set"
check "no SLURM_CONF: names the local cluster's env file" says "source DIR/env"
check "no SLURM_CONF: no Slurm resolver error" bash -c "! grep -qi 'resolve\|fatal' <<<\"\$0\"" "$SAID"
SAID=$(env -u SLURM_CONF timeout 60 "$MLSUP" run campaign.yaml 2>&1); RC=$?
check "no SLURM_CONF: run exits 1 and says what to set" bash -c "[ $RC -eq 1 ] && grep -q 'SLURM_CONF is not set' <<<\"\$0\"" "$SAID"
scenario_done

scenario "a job that can never start (more nodes than the partition has) is an alert at once"
mkdir big && cd big || exit 1
printf '#!/bin/bash\nsrun true\n' > job.sbatch
total=$(sinfo -h -o %D | awk '{ n += $1 } END { print n }')
cat > big.yaml <<EOF
name: $NAME-big
template: job.sbatch
slurm: {nodes: $((total + 2)), time: "00:10:00"}
poll_interval: 1s
EOF
said tick big.yaml
check "big: submitted" says "submitted attempt=1"
for _ in $(seq 1 20); do
  said tick big.yaml
  BIG+="$SAID"$'\n'
  grep -q "pending-stuck" <<<"$BIG" && break
  sleep 0.5
done
SAID=$BIG
check "big: the pending reason is printed" says "pending attempt=1"
# Slurm says PartitionNodeLimit or PartitionConfig for a node count over the partition's, depending on timing.
check "big: Slurm's reason named" grep -qE "the job waits in Slurm's queue: Partition(NodeLimit|Config)" <<<"$BIG"
check "big: an alert at once, saying it can never start" grep -qE "can never start as asked \(Slurm: Partition(NodeLimit|Config)\)" <<<"$BIG"
check "big: the reason is told once, not every pass" [ "$(grep -c '^[0-9:]* pending ' <<<"$BIG")" -eq 1 ]
check "big: the event log has the alert" bash -c "'$MLSUP' events big.yaml --json | grep -q '\"never_starts\":true'"
scancel --quiet "$(cd "$T/big" && "$MLSUP" status big.yaml --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')"
cd "$T" || exit 1
scenario_done

scenario "fixed: the campaign runs, fails once after saving, render shows the next submission exactly, then completes"
cat > train.sbatch <<'EOF'
#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:10:00
srun python3 {{vars.script}} {{{vars.script_args}}}
EOF
cat > campaign.yaml <<EOF
name: $NAME
template: train.sbatch
vars: {script: $TRAINER, script_args: --steps 40 --step-seconds 0.05 --ckpt-every 10 --fail-at-step 25 --fail-attempts 1}
checkpoint: {layout: glob, complete_marker: COMPLETE}
policy: {backoff_initial: 15s, backoff_max: 15s}
poll_interval: 1s
EOF
said validate campaign.yaml
check "fixed: validate is clean (exit 0, no warning)" bash -c "[ $RC -eq 0 ] && ! grep -q warning <<<\"\$0\"" "$SAID"
CONF="$T/campaign.yaml" CNAME=$NAME CDIR=$T
STATE=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["state_dir"])' < <("$MLSUP" status "$CONF" --json))
said tick "$CONF"
check "fixed: attempt 1 submitted, fresh start, nothing excluded" says "submitted attempt=1"
check "fixed: the submitted line shows exclusions and resume point" says "exclude=none resume_from=none resume_step=0"
# Attempt 1 saves step 20 and fails at 25: having made progress, it is resubmitted at once by the
# pass that sees its end. render is asked before that pass, once Slurm shows the job failed.
job1=$(job_of_attempt 1)
for _ in $(seq 1 120); do
  slurm_state=$(scontrol -o show job "$job1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  case $slurm_state in PENDING | RUNNING | CONFIGURING | COMPLETING | "") sleep 0.5 ;; *) break ;; esac
done
check "fixed: attempt 1's job failed ($slurm_state), and mlsup has not seen it yet" \
  bash -c "[ '$slurm_state' = FAILED ] && [ '$(attempt_field 1 ended)' = False ]"
RENDER=$(timeout 60 "$MLSUP" render "$CONF" --json 2>"$T/render.err")
check "render: exit 0" [ $? -eq 0 ]
rfield() { python3 -c 'import json,sys; v = json.loads(sys.argv[1])[sys.argv[2]]; print(",".join(v) if isinstance(v, list) else v)' "$RENDER" "$1"; }
check "render: attempt 2, from the journal" [ "$(rfield attempt):$(rfield from_journal)" = 2:True ]
check "render: resume point is the newest complete checkpoint (step 20)" [ "$(basename "$(rfield resume_from)")" = step_20 ]
for _ in $(seq 1 40); do
  [ -n "$(job_of_attempt 2)" ] && break
  SUBMIT=$(timeout 60 "$MLSUP" tick "$CONF" 2>&1)
  grep -q "submitted attempt=2" <<<"$SUBMIT" && break
  sleep 1
done
check "attempt 2 submitted" [ -n "$(job_of_attempt 2)" ]
check "fixed: attempt 1 failed after saving, so attempt 2 followed without a backoff" has_event attempt-ended attempt=1 class=failed delay=0.0
check "attempt 2's console line: exclusions and resume point" grep -q "submitted attempt=2 job_id=[0-9]* exclude=none resume_from=.*step_20 resume_step=20" <<<"$SUBMIT"
check "render = submission: tag" [ "$(rfield tag)" = "$(attempt_field 2 tag)" ]
check "render = submission: resume point" [ "$(rfield resume_from)" = "$(attempt_field 2 resume_from)" ]
check "render = submission: exclusions" [ "$(rfield exclude)" = "$(status_query '",".join(next(a["exclude"] for a in s["history"] if a["number"] == 2))')" ]
check "render = submission: the script, byte for byte" bash -c "[ \"\$(python3 -c 'import json,sys; sys.stdout.write(json.loads(sys.argv[1])[\"script\"])' \"\$0\")\" = \"\$(cat '$STATE/attempts/2/job.sbatch')\" ]" "$RENDER"
job2=$(job_of_attempt 2)
show=$(scontrol -o show job "$job2")
check "render = submission: Slurm's Comment is the rendered tag" grep -qF "Comment=$(rfield tag)" <<<"$show"
check "render = submission: Slurm's WorkDir is the rendered working folder" grep -qF "WorkDir=$(rfield working_dir) " <<<"$show"
check "render = submission: the script path is where mlsup stored it" [ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["sbatch_argv"][-1])' "$RENDER")" = "$STATE/attempts/2/job.sbatch" ]
run_campaign 60
check "fixed: the campaign completes (exit 0)" [ "$RC" -eq 0 ]
check "fixed: the result equals a failure-free run's" result_is_exact
renv() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])["environment"].get(sys.argv[2], "?"))' "$RENDER" "$1"; }
seen() {  # what attempt 2's rank 0 saw: attempt, resumed_from
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["rank"] == 0 and int(r["attempt"]) == 2: print(r[sys.argv[2]]); break' "$STATE/trainer-log.jsonl" "$1"
}
check "render = submission: the job's MLSUP_ATTEMPT" [ "$(renv MLSUP_ATTEMPT)" = "$(seen attempt)" ]
check "render = submission: the job's MLSUP_RESUME_FROM" [ "$(renv MLSUP_RESUME_FROM)" = "$(seen resumed_from)" ]
scenario_done

scenario "mlsup init: the srun and torchrun starters, as written but for the training's path, run to completion"
for kind in srun torchrun; do
  dir="$T/init-$kind"
  said init --template "$kind" --name "$NAME-$kind" "$dir"
  check "init $kind: exit 0, and the starter validates" bash -c "[ $RC -eq 0 ]" && check "init $kind: validate's ok line" says "campaign.yaml: ok: campaign $NAME-$kind"
  sed -i -e "s|^  script: train.py\$|  script: $TRAINER|" \
    -e 's|^  script_args: ""$|  script_args: --steps 20 --step-seconds 0.05 --ckpt-every 5|' "$dir/campaign.yaml"
  t0=$(date +%s)
  timeout -s KILL 90 "$MLSUP" run "$dir/campaign.yaml" > "$dir/run.out" 2>&1; rc=$?
  echo "init $kind: mlsup run exited $rc after $(( $(date +%s) - t0 ))s: $(tail -n 1 "$dir/run.out")"
  check "init $kind: the starter runs the training to completion (exit 0)" [ "$rc" -eq 0 ]
  check "init $kind: the training saved into the starter's checkpoint folder" \
    test -f "$dir/.mlsup/$NAME-$kind/checkpoints/step_20/COMPLETE"
done
scenario_done

finish
