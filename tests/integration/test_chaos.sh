#!/usr/bin/env bash
# Chaos, short: benchmarks/chaos.sh on the live cluster with 10 supervisor SIGKILLs, ticks racing and
# faults in the training (crash, hang, node down), then its checks one by one. The long run (100
# kills) is the same script with its defaults; see README's Benchmarks.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster

t0=$(date +%s)
out=$(MLSUP="$MLSUP" timeout -s KILL 600 bash "$REPO/benchmarks/chaos.sh" --kills 10 --steps 800 --fault-every 12 --limit 480 2>&1)
echo "$out" | tail -n 5
echo "chaos took $(( $(date +%s) - t0 ))s"
line=$(echo "$out" | grep '^chaos:' | tail -n 1)
said() { echo "$line" | grep -qE "$1"; }
check "chaos: the run ended with its summary" [ -n "$line" ]
check "chaos: the supervisor was SIGKILLed 10 times" said "^chaos: 10 supervisor kills"
check "chaos: faults were injected" said "kills, [1-9][0-9]* faults"
check "chaos: never two live jobs of the campaign at once" said "most live at once: 1;"
check "chaos: no ending lost (every job Slurm showed is a journaled attempt)" said "lost endings: 0;"
check "chaos: the result equals an uninterrupted run's" said "result exact: yes;"
check "chaos: the journal opens cleanly" said "journal problems: 0;"
check "chaos: the last run completed the campaign (exit 0)" said "last run exit 0;"
finish
