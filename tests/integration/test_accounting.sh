#!/usr/bin/env bash
# Endings Slurm has forgotten: clusters of their own with MinJobAge=5 s, where `mlsup tick` submits
# and is not run again until slurmctld has purged the ended job (it purges about once a minute).
# With accounting (slurmdbd backed by MariaDB): a crash is resumed, a person's scancel stops the
# campaign (12) with nothing resubmitted, a completion without target.steps is not rerun. Without
# accounting: the script's end record decides, and with no source at all (the batch shell killed by
# SIGKILL, which leaves no end record) the campaign is held (15) and nothing is submitted.
set -uo pipefail
# A hard limit on the whole suite: SIGTERM runs the EXIT trap, which stops both clusters.
[ -n "${MLSUP_ACCT_SUITE:-}" ] || exec timeout -k 30 420 env MLSUP_ACCT_SUITE=1 bash "$0" "$@"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/campaign_lib.sh"

T=$(mktemp -d /tmp/mlsup-acct.XXXXXX)
chmod 0755 "$T"
ACCT="$T/acct" PLAIN="$T/plain"
trap 'for d in "$ACCT" "$PLAIN"; do "$REPO/tests/cluster/cluster.sh" stop --dir "$d" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
start_cluster() {  # start_cluster DIR [--accounting]; prints its slurm.conf
  local line
  line=$("$REPO/tests/cluster/cluster.sh" start --dir "$1" --nodes 2 --min-job-age 5 "${@:2}" 2>"$1.log") || {
    cat "$1.log"; echo "FAILED: the cluster in $1 did not start"; echo "0 passed, 1 failed"; exit 1; }
  echo "${line#SLURM_CONF=}"
}
t0=$(date +%s)
A_CONF=$(start_cluster "$ACCT" --accounting)
echo "cluster with accounting up in $(( $(date +%s) - t0 ))s"
t0=$(date +%s)
P_CONF=$(start_cluster "$PLAIN")
echo "cluster without accounting up in $(( $(date +%s) - t0 ))s"

# A campaign named NAME on the cluster of slurm.conf CONF, whose batch script runs BODY.
declare -A CONF_OF CLUSTER_OF
campaign() {
  local name=$1 cluster=$2 body=$3 dir="$T/$1"
  mkdir -p "$dir"
  printf '#!/bin/bash\n#SBATCH --nodes=1\n%s\n' "$body" >"$dir/job.sbatch"
  cat >"$dir/campaign.yaml" <<YAML
name: $name
template: $dir/job.sbatch
slurm: {nodes: 1, time: "00:05:00", signal_lead: 30s}
heartbeat: {startup_timeout: 10m}
policy: {backoff_initial: 1s, backoff_max: 1s}
poll_interval: 1s
YAML
  CONF_OF[$name]="$dir/campaign.yaml" CLUSTER_OF[$name]=$cluster
}
on() { local name=$1; shift; CONF=${CONF_OF[$name]} SLURM_CONF=${CLUSTER_OF[$name]} "$@"; }
tick() { on "$1" timeout -s KILL 60 "$MLSUP" tick "${CONF_OF[$1]}" >>"$T/$1/tick.out" 2>&1; }
job() { on "$1" attempt_field "${2:-1}" job_id; }
state_of() { on "$1" job_state "$(job "$1" "${2:-1}")"; }
running() { [ "$(state_of "$1")" = RUNNING ]; }
forgotten() { ! on "$1" scontrol show job "$(job "$1")" >/dev/null 2>&1; }
all_forgotten() { local n; for n in "$@"; do forgotten "$n" || return 1; done; }
ended_event() { on "$1" event_count attempt-ended "${@:2}"; }

campaign crash "$A_CONF" 'sleep 2; exit 1'
campaign cancel "$A_CONF" 'sleep 600'
campaign complete "$A_CONF" 'sleep 1'
campaign record "$P_CONF" 'sleep 1'
campaign unknown "$P_CONF" 'sleep 1; kill -9 $$'
NAMES=(crash cancel complete record unknown)

scenario "each campaign's first tick submits its job; the jobs end (one by a person's scancel) and no tick sees it"
for n in "${NAMES[@]}"; do tick "$n"; done
check "every campaign submitted one job" test "$(for n in "${NAMES[@]}"; do job "$n"; done | grep -c .)" -eq 5
wait_until 60 running cancel
on cancel scancel "$(job cancel)"
wait_until 150 all_forgotten "${NAMES[@]}"
check "slurmctld forgot every job (MinJobAge 5 s and its purge)" all_forgotten "${NAMES[@]}"
scenario_done

scenario "the next ticks, with accounting"
for n in crash cancel complete; do tick "$n"; echo "tick of $n exited $?"; done
sleep 2
for n in crash cancel complete; do tick "$n"; echo "tick of $n exited $?"; done
check "crash: classed failed from accounting" test "$(ended_event crash class=failed end_source=accounting exit_code=1)" -eq 1
check "crash: the next attempt was submitted" test -n "$(job crash 2)"
check "person's scancel: classed cancelled from accounting" test "$(ended_event cancel class=cancelled end_source=accounting)" -eq 1
check "person's scancel: the campaign stopped with 12" test "$(on cancel status_field exit_code)" = 12
check "person's scancel: nothing resubmitted" test "$(on cancel sbatch_count)" -eq 1
check "completion without target.steps: completed from accounting" test "$(ended_event complete class=completed end_source=accounting)" -eq 1
check "completion: the campaign is done (0), not rerun" test "$(on complete status_field exit_code):$(on complete sbatch_count)" = "0:1"
scenario_done

scenario "the next ticks, without accounting"
for n in record unknown; do tick "$n"; echo "tick of $n exited $?"; done
sleep 2
for n in record unknown; do tick "$n"; echo "tick of $n exited $?"; done
check "end record: completed from the script's end record" test "$(ended_event record class=completed end_source=end_record)" -eq 1
check "end record: the campaign is done (0), not rerun" test "$(on record status_field exit_code):$(on record sbatch_count)" = "0:1"
check "no source: classed end_unknown" test "$(ended_event unknown class=end_unknown)" -eq 1
check "no source: the campaign is held with 15, an alerted stop" test "$(on unknown event_count stopped exit_code=15 alert=true)" -eq 1
check "no source: nothing resubmitted" test "$(on unknown sbatch_count)" -eq 1
scenario_done

on crash scancel "$(job crash 2)" 2>/dev/null
finish
