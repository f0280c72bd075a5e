#!/usr/bin/env bash
# The benchmarks' short runs: each script of benchmarks/ that measures on a live cluster runs here
# with small figures, under a hard limit, and must finish and print its whole table. A benchmark
# is a measurement, not a timed test: the figures are printed, not held to targets (the long runs
# and their figures are in the README). chaos.sh, many-campaigns.sh and long-save.sh have theirs in
# test_chaos, test_many and test_long_save.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
export MLSUP MLSUP_SLURM_POLL=${MLSUP_SLURM_POLL:?the test runner sets MLSUP_SLURM_POLL}

# Runs a benchmark with a hard limit: bench NAME LIMIT ARGS...; sets OUT and RC, prints its output and wall time.
bench() {
  local name=$1 limit=$2 t0; shift 2
  t0=$(date +%s)
  OUT=$(timeout -s KILL "$limit" bash "$REPO/benchmarks/$name" "$@" 2>&1); RC=$?
  echo "$OUT" | sed 's/^/  | /'
  echo "-- $name $* : exit $RC after $(( $(date +%s) - t0 ))s"
}
# True when the output has a line matching the extended regex.
has_line() { grep -qE "$1" <<<"$OUT"; }
num='[0-9]+(\.[0-9]+)?'

bench reaction.sh 180 --endings 3 --steady 5 --campaigns 5
check "reaction: exits 0" [ "$RC" -eq 0 ]
check "reaction: the 4 other campaigns' jobs pending first" has_line "^\(4 jobs pending\)$"
check "reaction: job-query RPCs and CPU share while a job runs" has_line "^supervisor CPU: $num s in $num s = $num% of one core$"
check "reaction: the job queries over the endings, the poller's taken off" has_line "^job-query RPCs over the endings, the poller's [0-9]+ taken off: -?[0-9]+ in $num s = -?$num/s$"
check "reaction: the percentiles over 3 endings" has_line "^reaction .*, 3 endings: min $num s, p50 $num s, p95 $num s, max $num s$"

bench reaction.sh 150 --endings 1 --steady 3 --node-loss
check "reaction, node loss: exits 0" [ "$RC" -eq 0 ]
check "reaction, node loss: Slurm's end of the crashed node's job to the submission" has_line "^reaction .*, 1 endings: min $num s, p50 $num s, p95 $num s, max $num s$"
check "reaction, node loss: the crash to the submission" has_line "^node crash -> replacement submitted, 1 losses: min $num s, p50 $num s, max $num s$"

bench long-journal.sh 120 --records 3000 --ticks 2
check "long-journal: exits 0" [ "$RC" -eq 0 ]
check "long-journal: a row for the fresh campaign, without a replay snapshot" has_line "^fresh +3 +$num +$num +$num +$num +0\.0 *$"
check "long-journal: a row for the long one, its replay snapshot kept" \
  [ "$(echo "$OUT" | awk '$1 == "long" && $2 == 3000 && $7 > 0' | wc -l)" -eq 1 ]

bench recovery.sh 420
check "recovery: exits 0" [ "$RC" -eq 0 ]
for case in clean crash sticky hang nodecrash powerloss; do
  check "recovery: a row for $case" has_line "^$case +$num "
done
# The time lost is the wall less the clean run's: below zero when a quick recovery loses less than the
# two runs' own spread (seen with a crash recovered 0.06 s after its end record).
check "recovery: each fault's row sets mlsup's own time lost beside the stopwatch's" \
  [ "$(echo "$OUT" | grep -cE "^(crash|sticky|hang|nodecrash|powerloss) +$num +-?$num +$num ")" -eq 5 ]
check "recovery: the faults' restarts split into detect+react+queue" \
  [ "$(echo "$OUT" | grep -cE "^(crash|sticky|hang|nodecrash|powerloss) .* $num\+$num\+$num$")" -eq 5 ]

bench recovery.sh 300 --schedule
check "recovery --schedule: exits 0" [ "$RC" -eq 0 ]
check "recovery --schedule: the faulty run restarted three times, each split" \
  has_line "^schedule +$num +$num +$num +4 +$num,$num,$num +$num\+$num\+$num,$num\+$num\+$num,$num\+$num\+$num$"
check "recovery --schedule: the goodput of both runs" \
  has_line "^goodput mlsup .*: clean $num, under the fault schedule $num$"

bench slurm-query.sh 150 --jobs 50 --polls 20
check "slurm-query: exits 0" [ "$RC" -eq 0 ]
check "slurm-query: four cases measured, each with its 20 polls" \
  [ "$(echo "$OUT" | grep -cE "rpcs=[0-9]+ .*polls=20 mean_us=[0-9]+")" -eq 4 ]

bench width.sh 240 --widths 4 --spares 1 --cases clean,powerloss --steps 60
check "width: exits 0" [ "$RC" -eq 0 ]
check "width: a clean row and a power loss row, each exact" \
  [ "$(echo "$OUT" | grep -cE "^ +4 +1 +(clean|powerloss) .* exact$")" -eq 2 ]
check "width: the power loss excluded no healthy node, restarted in the same job, at most 2 probe steps" \
  has_line "^ +4 +1 +powerloss +$num +$num +$num +-?$num +2 +yes +[^ ]+ +0 +[012] "
check "width: the training's start-up measured apart from the rest of the time lost" \
  has_line "^ +4 +1 +clean +$num +- +$num +- +1 "

bench steady-fs.sh 150 --window 10 --settle 15
check "steady-fs: exits 0" [ "$RC" -eq 0 ]
check "steady-fs: the calls counted per pass" has_line "^(openat|newfstatat) +[0-9]+ +$num +$num$"
# Not a figure but the rule: a pass that decided nothing syncs neither memory.json nor status.json
# (the lease's renewal, every 60 s, may fall in the window; it is counted apart).
check "steady-fs: no fsync of memory.json or status.json while the training only steps" \
  has_line "^fsync per pass: $num \(memory.json and status.json: 0\)$"

bench hang.sh 240 --trials 2
check "hang: exits 0" [ "$RC" -eq 0 ]
check "hang: a hang found and replaced" has_line "^1 +hang +- +$num +$num$"
check "hang: a power loss found and replaced" has_line "^2 +power-loss +[^ ]+ +$num +$num$"

finish
