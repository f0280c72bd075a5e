#!/usr/bin/env bash
# The Slurm client's load on slurmctld and its behaviour through a controller outage and a node
# crash, on the live local cluster, for the libslurm and command-line backends.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
require_cluster
POLL=${MLSUP_SLURM_POLL:?the test runner sets MLSUP_SLURM_POLL}
work=$(mktemp -d /tmp/mlsup-client-test.XXXXXX)
ids=()
cleanup() { [ ${#ids[@]} -eq 0 ] || scancel "${ids[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# A shim folder whose squeue, sacct and scontrol log each call, then run the real command.
make_shim() {
  mkdir -p "$work/shim"
  for cmd in squeue sacct scontrol; do
    printf '#!/bin/sh\necho "%s $*" >> %s/shim.log\nexec /usr/bin/%s "$@"\n' "$cmd" "$work" "$cmd" > "$work/shim/$cmd"
    chmod +x "$work/shim/$cmd"
  done
  : > "$work/shim.log"
}

echo "== one job-query RPC per poll for 12 watched jobs"
for i in $(seq 12); do ids+=("$(sbatch --parsable -N1 -o /dev/null --comment="mlsup-client-test" --wrap 'sleep 300')"); done
make_shim
before=$(sdiag_count REQUEST_JOB_USER_INFO); before_all=$(sdiag_count REQUEST_JOB_INFO); before_fed=$(sdiag_count REQUEST_FED_INFO)
PATH="$work/shim:$PATH" "$POLL" --backend libslurm --polls 20 --interval-ms 100 "${ids[@]}" > "$work/poll.out"
after=$(sdiag_count REQUEST_JOB_USER_INFO); after_all=$(sdiag_count REQUEST_JOB_INFO); after_fed=$(sdiag_count REQUEST_FED_INFO)
echo "REQUEST_JOB_USER_INFO +$((after - before)), REQUEST_JOB_INFO +$((after_all - before_all)), REQUEST_FED_INFO +$((after_fed - before_fed)) over 20 polls"
check "libslurm: 20 polls cost exactly 20 job-info RPCs" [ $((after - before)) -eq 20 ]
check "libslurm: no other job-info or federation RPC" [ $((after_all - before_all + after_fed - before_fed)) -eq 0 ]
check "libslurm: no squeue, sacct or scontrol process ran" [ ! -s "$work/shim.log" ]
check "libslurm: every poll saw all 12 jobs" [ "$(grep -c '"ok":true' "$work/poll.out")" -eq 20 ] && \
  [ "$(head -1 "$work/poll.out" | grep -o '"id"' | wc -l)" -eq 12 ]

make_shim
before_all=$(sdiag_count REQUEST_JOB_INFO)
PATH="$work/shim:$PATH" "$POLL" --backend cli --polls 5 --interval-ms 100 "${ids[@]}" > "$work/poll-cli.out"
after_all=$(sdiag_count REQUEST_JOB_INFO)
echo "cli: REQUEST_JOB_INFO +$((after_all - before_all)) over 5 polls; $(wc -l < "$work/shim.log") command(s) ran"
check "cli: one scontrol per poll, nothing else" [ "$(grep -c '^scontrol -o show job' "$work/shim.log")" -eq 5 ] && \
  [ "$(wc -l < "$work/shim.log")" -eq 5 ]
check "cli: 5 polls cost 5 job-info RPCs" [ $((after_all - before_all)) -eq 5 ]
check "cli: every poll saw all 12 jobs" [ "$(head -1 "$work/poll-cli.out" | grep -o '"id"' | wc -l)" -eq 12 ]
scancel "${ids[@]}"; ids=()

for backend in libslurm cli; do
  echo "== $backend: slurmctld down for several polls while a job runs"
  job=$(sbatch --parsable -N1 -o /dev/null --wrap 'sleep 120'); ids+=("$job")
  wait_until 30 sh -c "[ \"\$(scontrol -o show job $job | grep -o 'JobState=[A-Z]*')\" = JobState=RUNNING ]"
  "$POLL" --backend "$backend" --polls 22 --interval-ms 1000 "$job" > "$work/outage-$backend.out" 2>/dev/null &
  poller=$!
  sleep 2.5
  "$REPO/tests/cluster/cluster.sh" stop-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1
  sleep 14  # each failed poll waits out libslurm's own connect retries (~4 s)
  "$REPO/tests/cluster/cluster.sh" start-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1
  wait "$poller"
  out="$work/outage-$backend.out"
  errors=$(grep -c '"ok":false' "$out"); oks=$(grep -c '"ok":true' "$out")
  echo "$backend: $oks answers, $errors errors: $(grep -o '"error":"[a-z-]*"' "$out" | sort | uniq -c | tr '\n' ' ')"
  check "$backend: the outage shows as errors for several polls" [ "$errors" -ge 2 ]
  check "$backend: errors say unreachable or timeout, never a job state" \
    [ "$(grep '"ok":false' "$out" | grep -cvE '"error":"(unreachable|timeout)"')" -eq 0 ]
  check "$backend: every answer, before and after, is the same running job" \
    [ "$(grep '"ok":true' "$out" | grep -c "\"id\":$job,\"state\":\"RUNNING\"")" -eq "$oks" ]
  check "$backend: the last poll is answered again" sh -c "tail -1 '$out' | grep -q '\"ok\":true'"
  scancel "$job"
done

echo "== a crashed node: seen DOWN, its job NODE_FAIL"
job=$(sbatch --parsable -N2 --no-requeue -o /dev/null --wrap 'srun sleep 300'); ids+=("$job")
wait_until 30 sh -c "[ \"\$(scontrol -o show job $job | grep -o 'JobState=[A-Z]*')\" = JobState=RUNNING ]"
node=$(scontrol -o show job "$job" | grep -o ' NodeList=[^ ]*' | cut -d= -f2 | xargs scontrol show hostnames | tail -1)
t0=$(date +%s)
"$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" crash "$node" >/dev/null 2>&1
"$POLL" --backend libslurm --polls 60 --interval-ms 1000 "$job" > "$work/crash.out" 2>/dev/null &
poller=$!
wait_until 60 sh -c "grep -q '\"state\":\"NODE_FAIL\"' '$work/crash.out'"
kill "$poller" 2>/dev/null; wait "$poller" 2>/dev/null
echo "NODE_FAIL seen after $(( $(date +%s) - t0 ))s"
check "the client reports the job NODE_FAIL" grep -q '"state":"NODE_FAIL"' "$work/crash.out"
check "Slurm shows the crashed node down" sh -c "sinfo -h -N -n '$node' -o '%T' | grep -qiE 'down|not_responding|\*'"
"$REPO/tests/cluster/fault.sh" --dir "$CLUSTER_DIR" revive "$node" >/dev/null 2>&1
check "the node comes back" wait_until 60 sh -c "sinfo -h -N -n '$node' -o '%T' | grep -qE '^(idle|mixed|allocated)$'"

finish
