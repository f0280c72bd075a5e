#!/usr/bin/env bash
# Liveness for a plain sbatch script that never writes a heartbeat (heartbeat.source auto): one that
# prints a line every second runs to completion under start-up and steady timeouts of a few seconds;
# the same script made to stop printing is found hung within those timeouts, by its output. The
# alerts chosen (hang, stopped, completed) are told through notify.command.
# Hard timeout 150 s; prints its wall time.
set -uo pipefail
if [ -z "${LIVENESS_TIMED:-}" ]; then
  LIVENESS_TIMED=1 exec timeout -k 5 150 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
require_cluster
source "$(dirname "$0")/campaign_lib.sh"

T=$(mktemp -d /tmp/mlsup-liveness.XXXXXX)
NAME="liveness-$$"
cleanup() {
  for id in $(squeue -h -o '%i %k' 2>/dev/null | awk -v n="mlsup:$NAME" 'index($2, n) == 1 { print $1 }'); do
    scancel "$id" 2>/dev/null
  done
  rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || exit 1

# The plain script: prints a line a second for $1 seconds, then (when $2 is given) goes silent that long.
cat > plain.sbatch <<'EOF'
#!/bin/bash
#SBATCH --nodes=1
#SBATCH --time=00:15:00
for i in $(seq {{vars.lines}}); do echo "line $i"; sleep 1; done
sleep {{vars.silence}}
echo done
EOF
campaign() {  # campaign NAME LINES SILENCE
  cat > "$1.yaml" <<EOF
name: $NAME-$1
template: plain.sbatch
vars: {lines: "$2", silence: "$3"}
heartbeat: {startup_timeout: 8s, steady_timeout: 6s}
policy: {budgets: {hang: 0/6h}}
poll_interval: 500ms
notify: {command: 'echo "\$MLSUP_ALERT_KIND" >> $1.alerts', on: [hang, stopped, completed], cooldown: 0s}
EOF
}
alerts_of() { tr '\n' ' ' < "$1.alerts" 2>/dev/null; }
event_of() { "$MLSUP" events "$1.yaml" --json | count_where "event=$2" "${@:3}"; }

scenario "a script that prints every second and never writes a heartbeat completes"
campaign printing 20 0
said=$("$MLSUP" validate printing.yaml 2>&1)
check "validate says the output shows life until a heartbeat is written" \
  grep -qF "liveness: the job's output growing until the training writes MLSUP_HEARTBEAT_FILE" <<<"$said"
t0=$(date +%s)
timeout 90 "$MLSUP" run printing.yaml >printing.out 2>&1
RC=$?
echo "run exited $RC after $(( $(date +%s) - t0 ))s: $(tail -n 1 printing.out)"
check "printing: the campaign completed (exit 0), past the 8 s start-up and 6 s steady timeouts" [ "$RC" -eq 0 ]
check "printing: one attempt" [ "$(event_of printing submitted)" -eq 1 ]
check "printing: no hang was found" [ "$(event_of printing hang-detected)" -eq 0 ]
check "printing: the alerts told: completed only" [ "$(alerts_of printing)" = "completed " ]

scenario "the same script stops printing: found hung by its output within the steady timeout"
campaign silent 5 100
t0=$(date +%s)
timeout 90 "$MLSUP" run silent.yaml >silent.out 2>&1
RC=$?
took=$(( $(date +%s) - t0 ))
echo "run exited $RC after ${took}s: $(tail -n 1 silent.out)"
"$MLSUP" events silent.yaml --json | grep -E '"event":"(hang-detected|attempt-ended)"' | cut -c1-300
check "silent: a hang was found" [ "$(event_of silent hang-detected)" -ge 1 ]
check "silent: by the output that stopped growing" [ "$(event_of silent hang-detected reason~"the job's output has not grown")" -ge 1 ]
check "silent: the attempt ended as a hang" [ "$(event_of silent attempt-ended class=hang)" -ge 1 ]
check "silent: found well before the script's own end (100 s of silence), in ${took}s" [ "$took" -lt 60 ]
check "silent: the hang budget of 0 stopped the campaign (exit 11)" [ "$RC" -eq 11 ]
check "silent: the alerts told: the hang, then the stop ($(alerts_of silent))" grep -Eqx '(hang )+stopped ' <<<"$(alerts_of silent)"
finish
