#!/usr/bin/env bash
# Each shipped launcher template, rendered by mlsup and run for real on the live cluster (2 nodes,
# 2 ranks each) with stand-in torchrun/accelerate/deepspeed commands that start a probe trainer, and
# the torchrun template once more with the real torchrun (Debian's python3-torch; missing, it fails):
# the pre-timeout signal sent to the batch shell (as --signal=B: does) must reach every training
# process exactly once, and the job must end COMPLETED with exit code 0. Each runs the preflight
# (python3 -m mlsup_train.preflight) on both nodes first.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
MLSUP=${MLSUP:?the test runner sets MLSUP}
work=$(mktemp -d /tmp/mlsup-launchers.XXXXXX)
jobs=()
trap '[ ${#jobs[@]} -eq 0 ] || scancel "${jobs[@]}" 2>/dev/null; rm -rf "$work"' EXIT

export PYTHONPATH="$REPO/python${PYTHONPATH:+:$PYTHONPATH}"  # mlsup_train's preflight, for the jobs (sbatch exports it)
for launcher in srun torchrun accelerate megatron torchrun-real; do
  t0=$(date +%s)
  template=${launcher%-real} standins="$REPO/tests/standins:"
  [ "$launcher" = torchrun-real ] && standins=""
  dir="$work/$launcher"
  mkdir -p "$dir"
  procs=2 ntasks=""
  [ "$launcher" = srun ] && ntasks="ntasks_per_node: 2"
  cat > "$dir/campaign.yaml" <<YAML
name: launch-$launcher
state_dir: $dir/state
template: $REPO/templates/$template.sbatch.tmpl
vars:
  script: $REPO/tests/standins/probe_trainer.py
  script_args: --out "$dir/signals" --ready-dir "$dir/ready" --step-time 0.1
  nproc_per_node: $procs
slurm:
  nodes: 2
  $ntasks
  time: "00:10:00"
preflight:
  command: /usr/bin/python3 -m mlsup_train.preflight
  deadline: 90s
YAML
  "$MLSUP" render "$dir/campaign.yaml" --write "$dir/render" >/dev/null
  check "$launcher: the rendered script is valid bash" bash -n "$dir/render/job.sbatch"
  job=$(PATH="$standins$PATH" "$dir/render/submit.sh")
  jobs+=("$job")
  wait_until 60 sh -c "[ \"\$(scontrol -o show job $job | grep -o 'JobState=[A-Z]*')\" = JobState=RUNNING ]"
  # The signal goes out once every rank has its handler (the templates ignore an earlier signal).
  ranks_ready() { [ "$(ls "$dir/ready" 2>/dev/null | wc -l)" -ge 4 ]; }
  wait_until 150 ranks_ready  # the preflight may take its whole deadline on a loaded machine
  out=$(scontrol -o show job "$job" | sed -n 's/.* StdErr=\([^ ]*\).*/\1/p')
  preflight_done() { grep -q 'mlsup preflight: 2 nodes joined and reduced' "$out"; }
  check "$launcher: the preflight ran on both nodes before the training" preflight_done
  preflight_done || { echo "$launcher: the job's output, its last 30 lines:"; tail -n 30 "$out" 2>/dev/null | sed 's/^/  | /'; }
  echo "$launcher: $(ls "$dir/ready" 2>/dev/null | wc -l) ranks ready after $(( $(date +%s) - t0 ))s"
  # At a hang mlsup sends MLSUP_STACKS_SIGNAL (USR2) to the job's steps: every rank appends its stacks
  # to its own file, and nothing dies of it (no launcher, no node part: the job ends COMPLETED below).
  hang="$dir/state/attempts/1/hang"
  scancel --signal=USR2 "$job"
  dumps() { cat "$hang"/rank-*.txt 2>/dev/null | grep -c '^Current thread'; }
  wait_until 30 sh -c "[ \"\$(cat '$hang'/rank-*.txt 2>/dev/null | grep -c '^Current thread')\" -ge 4 ]"
  sleep 1  # a second delivery would show as a fifth dump
  echo "$launcher: $(dumps) stack dump(s) in $(ls "$hang" 2>/dev/null | wc -l) rank file(s)"
  check "$launcher: the stacks signal: 4 ranks dumped their stacks, once each" [ "$(dumps)" -eq 4 ]
  check "$launcher: ... in 4 files, one per rank" [ "$(grep -l '^Current thread' "$hang"/rank-*.txt 2>/dev/null | wc -l)" -eq 4 ]
  check "$launcher: ... and the job still runs" sh -c "scontrol -o show job $job | grep -q 'JobState=RUNNING'"
  scancel --batch --signal=USR1 "$job"
  wait_until 60 sh -c "scontrol -o show job $job | grep -qE 'JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT)'"
  state=$(scontrol -o show job "$job" | grep -oE 'JobState=[A-Z_]+ .*ExitCode=[0-9:]+' | sed -E 's/JobState=([A-Z_]+) .*ExitCode=/\1 /')
  echo "$launcher: job $job ended $state; $(wc -l < "$dir/signals" 2>/dev/null || echo 0) signal line(s) in $(( $(date +%s) - t0 ))s"
  check "$launcher: the job ended COMPLETED 0:0" [ "$state" = "COMPLETED 0:0" ]
  check "$launcher: 4 signal lines" [ "$(grep -c '^got USR1' "$dir/signals" 2>/dev/null)" -eq 4 ]
  check "$launcher: from 4 training processes, once each" [ "$(cut -d' ' -f3 "$dir/signals" 2>/dev/null | sort -u | wc -l)" -eq 4 ]
  check "$launcher: ranks on both nodes" [ "$(grep -o 'node=[^ ]*' "$dir/signals" | sort -u | wc -l)" -eq 2 ]
done
finish
