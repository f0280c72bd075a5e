#!/usr/bin/env bash
# Chaos, short: benchmarks/chaos.sh on the live cluster with 10 supervisor SIGKILLs, ticks racing and
# faults in the training (crash, hang, node down), then its checks one by one; then a fault-free
# campaign while slurmctld is restarted 3 times: no false failure. Both on a cluster of its own with
# accounting (slurmdbd backed by MariaDB), so that the duplicate check is made from slurmctld's
# samples and from accounting's submit and end times, and every job accounting has with the
# campaign's tag is one the journal knows (and the other way round). The long runs (100 kills, 10
# restarts) are the same script; see README's Chaos.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

t0=$(date +%s)
cluster=$(mktemp -d /tmp/mlsup-chaos-acct.XXXXXX)
trap '"$REPO/tests/cluster/cluster.sh" stop --dir "$cluster" >/dev/null 2>&1; rm -rf "$cluster"' EXIT
line=$("$REPO/tests/cluster/cluster.sh" start --dir "$cluster" --nodes 4 --slurmd-timeout 10 --accounting 2>"$cluster.log") || {
  cat "$cluster.log"; echo "FAILED: the cluster with accounting did not start"; echo "0 passed, 1 failed"; exit 1; }
rm -f "$cluster.log"
export "$line"
echo "cluster with accounting up in $(( $(date +%s) - t0 ))s"

t0=$(date +%s)
out=$(MLSUP="$MLSUP" timeout -s KILL 600 bash "$REPO/benchmarks/chaos.sh" --accounting --kills 10 --steps 800 --fault-every 12 --limit 480 2>&1)
echo "$out" | tail -n 5
echo "chaos took $(( $(date +%s) - t0 ))s"
line=$(echo "$out" | grep '^chaos:' | tail -n 1)
said() { grep -qE "$1" <<<"$line"; }
check "chaos: the run ended with its summary" [ -n "$line" ]
check "chaos: the supervisor was SIGKILLed 10 times" said "^chaos: 10 supervisor kills"
check "chaos: no duplicate ever started" said "duplicates started: 0,"
check "chaos: faults were injected" said "during an sbatch\), [1-9][0-9]* faults"
check "chaos: never two running jobs of the campaign at once" said "most running at once: 1;"
check "chaos: no ending lost (every job Slurm showed is a journaled attempt)" said "lost endings: 0;"
check "chaos: the result equals an uninterrupted run's" said "result exact: yes;"
check "chaos: the journal opens cleanly" said "journal problems: 0;"
check "chaos: the last run completed the campaign (exit 0)" said "last run exit 0;"
check "chaos: accounting was asked" said "; accounting: [1-9][0-9]* jobs,"
check "chaos: never two running jobs at once in accounting (start to end)" said "accounting: .*most running at once: 1,"
check "chaos: no job in accounting unknown to the journal (no orphan, no second submission)" said "unknown to the journal: 0,"
check "chaos: every job the journal knows is in accounting" said "journaled but not in accounting: 0;"

t0=$(date +%s)
out=$(MLSUP="$MLSUP" timeout -s KILL 300 bash "$REPO/benchmarks/chaos.sh" --accounting --kills 0 --fault-every 0 --ctld-restarts 3 \
  --restart-every 10 --steps 1200 --limit 240 2>&1)
echo "$out" | tail -n 5
echo "chaos with slurmctld restarts took $(( $(date +%s) - t0 ))s"
line=$(echo "$out" | grep '^chaos:' | tail -n 1)
check "ctld restarts: the run ended with its summary" [ -n "$line" ]
check "ctld restarts: slurmctld was restarted 3 times" said " 3 slurmctld restarts,"
check "ctld restarts: one attempt, no false failure" said " 1 attempts, .* false failures: 0;"
check "ctld restarts: the result equals an uninterrupted run's" said "result exact: yes;"
check "ctld restarts: the journal opens cleanly" said "journal problems: 0;"
check "ctld restarts: the run completed the campaign (exit 0)" said "last run exit 0;"
check "ctld restarts: accounting has the one job, the journal's" \
  said "accounting: 1 jobs, most running at once: 1, unknown to the journal: 0, journaled but not in accounting: 0;"
finish
