#!/usr/bin/env bash
# Long saves, short: benchmarks/long-save.sh with 4 s saves on the live cluster (the 90 s run is in the
# README): each save is kept through `mlsup cancel`, `pause --now`, a window's end and two time limits
# under signal_lead auto, no job is cancelled mid-save, and attempt 2's lead is sized from attempt 1's
# measured save. Hard limit 600 s (about 280 s).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
export MLSUP MLSUP_SLURM_POLL=${MLSUP_SLURM_POLL:?the test runner sets MLSUP_SLURM_POLL}
num='[0-9]+(\.[0-9]+)?'
has_line() { grep -qE "$1" <<<"$OUT"; }

t0=$(date +%s)
OUT=$(timeout -s KILL 600 bash "$REPO/benchmarks/long-save.sh" --save-seconds 4 2>&1); RC=$?
echo "$OUT" | sed 's/^/  | /'
echo "-- long-save.sh --save-seconds 4: exit $RC after $(( $(date +%s) - t0 ))s"
check "long-save: exits 0" [ "$RC" -eq 0 ]
for case in cancel pausenow window timelimit-1 timelimit-2; do
  check "long-save: $case kept its save (a newer complete checkpoint at the job's end), no job cancelled, its wall time" \
    has_line "^$case +(-|[0-9]+) +[0-9]+ +yes +0 +-?[0-9]+ +[a-z_]+ +[0-9]+ +$num$"
done
check "long-save: cancel stopped the campaign, the run exited 16" has_line "^cancel .* stop +16 +$num$"
check "long-save: the time limits ended before the limit (the save at the pre-timeout signal)" \
  [ "$(echo "$OUT" | grep -cE "^timelimit-[12] .* yes +0 +-[0-9]+ ")" -eq 2 ]
check "long-save: attempt 2's lead was sized from attempt 1's measured save (1.5 x (4 s + 0.1 s) + 60 s), not the configured 90 s" \
  has_line "attempt 2's lead (6[2-9]|7[0-9]) s"

finish
