#!/usr/bin/env bash
# The SPANK plugin on a cluster of its own, loaded as `required` (under `optional` Slurm ignores a
# plugin's errors, so fail-soft checks would prove nothing) from a folder every user reads, as an admin
# installs it (not from the checkout, which may be unreadable to others), with jobs of an ordinary user: options
# in srun and #SBATCH, task-exit records naming the failing rank's node, per-task environment, the
# health check failing one node fast, "node" records (addresses, planted GPUs), and fail-soft behaviour (bad plugstack arguments, a missing
# check, an unwritable state directory, planted symlinks) that never breaks a job or drains a node.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

BUILD=$(dirname "${MLSUP:?set MLSUP to the built mlsup binary}")
SO="$BUILD/plugins/mlsup_spank.so"
READER="$BUILD/mlsup_node_records"
USER_NAME=mlsupuser
for f in "$SO" "$READER"; do
  [ -f "$f" ] || { echo "FAILED: $f is missing (build first)"; echo "0 passed, 1 failed"; exit 1; }
done
id "$USER_NAME" >/dev/null 2>&1 || useradd -m "$USER_NAME" || {
  echo "FAILED: cannot create user $USER_NAME"; echo "0 passed, 1 failed"; exit 1; }

T=$(mktemp -d /tmp/mlsup-spank.XXXXXX)
chmod 0755 "$T"
install_for_users "$T/opt" "$BUILD" || { echo "FAILED: cannot lay out the plugin in $T/opt"; echo "0 passed, 1 failed"; exit 1; }
SO="$T/opt/lib/slurm/mlsup_spank.so"  # where an admin puts it: every user's srun reads it
U="$T/user"  # the user's own directory: state dirs, heartbeats, job output
install -d -o "$USER_NAME" -m 0755 "$U"
PLUGSTACK="$T/plugstack.conf"
HEALTH="$T/health.sh"
install -m 0755 "$REPO/tests/standins/health_fail_on.sh" "$HEALTH"
: >"$HEALTH.bad-nodes"
plugstack() { echo "required $SO $*" >"$PLUGSTACK"; }  # slurmstepd reads it afresh for every step
GPUS="$T/gpus"  # gpu_info=$GPUS/%n: each node its own GPU folders, as the driver lays them out
plugstack "health_check=$HEALTH health_fail_job=yes health_timeout=10 gpu_info=$GPUS/%n"

trap '"$REPO/tests/cluster/cluster.sh" stop --dir "$T/cluster" >/dev/null 2>&1; rm -rf "$T"' EXIT
conf_line=$("$REPO/tests/cluster/cluster.sh" start --dir "$T/cluster" --nodes 3 --plugstack "$PLUGSTACK") || {
  echo "FAILED: the cluster with the plugin did not start"; echo "0 passed, 1 failed"; exit 1; }
export "$conf_line"
source "$T/cluster/cluster.info"
N1="${PREFIX}1" N2="${PREFIX}2" N3="${PREFIX}3"
LOGS=("$T"/cluster/log/slurmd-*.log)
UUID1=GPU-5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b UUID2=GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d
# Plants a GPU's information file as the NVIDIA driver prints it: plant_gpu NODE BUS UUID MODEL
plant_gpu() {
  install -d -m 0755 "$GPUS/$1/$2"
  printf 'Model: \t\t %s\nIRQ:   \t\t 255\nGPU UUID: \t %s\nVideo BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t %s\nDevice Minor: \t 0\nGPU Excluded:\t No\n' \
    "$4" "$3" "$2" >"$GPUS/$1/$2/information"
}
plant_gpu "$N1" 0000:07:00.0 "$UUID1" "NVIDIA H100 80GB HBM3"
plant_gpu "$N2" 0000:0a:00.0 "$UUID2" "NVIDIA A100-SXM4-40GB"  # $N3: no folder at all

# Runs a command as the ordinary user with a clean environment plus the given VAR=value words.
as_user() {
  local vars=()
  while [[ "${1:-}" == *=* ]]; do vars+=("$1"); shift; done
  (cd "$U" && runuser -u "$USER_NAME" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$USER_NAME" \
    SLURM_CONF="$SLURM_CONF" "${vars[@]}" timeout 30 "$@")
}
# Submits a job script (stdin) as the user: submit VAR=value... -- SBATCH_ARGS...; prints the job id.
submit() {
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  cat >"$U/job.$$.sh"
  chmod 0755 "$U/job.$$.sh"
  as_user "${vars[@]}" sbatch --parsable -o "$U/job-%j.out" "$@" "$U/job.$$.sh"
}
ended() { case "$(job_state "$1")" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) return 0 ;; esac; return 1; }
wait_job() { wait_until "${2:-60}" ended "$1" || echo "job $1 did not end in ${2:-60}s (state $(job_state "$1"))"; }
records_of() { echo "$1/nodes/$2"; }
# The reader's answer for STATE_DIR JOB as JSON; jq-free field access through python3.
reader() { "$READER" "$1" "$2"; }
json_get() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); exec("print(" + sys.argv[2] + ")")' "$1" "$2"; }
in_logs() { grep -qF -- "$1" "${LOGS[@]}"; }
no_node_drained() { ! sinfo -h -N -o '%T' | grep -iE 'drain|down|fail' >/dev/null; }
step() { echo "--- $* ($(( $(date +%s) - SUITE_STARTED ))s)"; }

step "options"
help=$(as_user srun --help 2>&1)
check "srun --help lists --mlsup-run" grep -q -- '--mlsup-run=NAME' <<<"$help"
check "srun --help lists --mlsup-state-dir" grep -q -- '--mlsup-state-dir=DIR' <<<"$help"

step "a 3-node job with one failing rank (#SBATCH --mlsup-run, --mlsup-state-dir)"
S1="$U/s1"
as_user mkdir "$S1"
J1=$(submit MLSUP_HEARTBEAT_FILE="$U/hb" -- <<EOF
#!/bin/bash
#SBATCH --mlsup-run=demo
#SBATCH --mlsup-state-dir=$S1
#SBATCH -N3
srun -n3 --kill-on-bad-exit=1 bash -c 'echo "\$SLURM_PROCID \$MLSUP_NODE \$MLSUP_HEARTBEAT_FILE \$MLSUP_RUN \$MLSUP_STATE_DIR \$MLSUP_ATTEMPT_HEARTBEAT_FILE" >$U/env.\$SLURM_PROCID
  if [ "\$SLURM_PROCID" = 1 ]; then sleep 1; exit 3; fi; sleep 30'
EOF
)
wait_job "$J1" 60
check "the job failed ($(job_state "$J1"))" [ "$(job_state "$J1")" = FAILED ]
check "one record file per node" [ "$(ls "$(records_of "$S1" "$J1")" 2>/dev/null | sort | tr '\n' ' ')" = "$N1.jsonl $N2.jsonl $N3.jsonl " ]
check "records and their directories are owned by $USER_NAME" \
  [ "$(stat -c %U "$S1/nodes" "$(records_of "$S1" "$J1")" "$(records_of "$S1" "$J1")"/*.jsonl | sort -u)" = "$USER_NAME" ]
check "the first failure (by time) is rank 1 on $N2 exiting 3; ranks 0 and 2 ended by a signal" python3 - "$(records_of "$S1" "$J1")" "$N2" <<'PY'
import glob, json, sys
recs = [json.loads(l) for f in glob.glob(sys.argv[1] + "/*.jsonl") for l in open(f)]
steps = [r for r in recs if r["kind"] == "task-exit" and r["step"] == 0]
assert all(r["v"] == 1 for r in recs), recs
bad = sorted((r for r in steps if r["exit_code"] or r["signal"]), key=lambda r: (r["time"], r["rank"]))
first = bad[0]
assert (first["node"], first["rank"], first["exit_code"], first["signal"]) == (sys.argv[2], 1, 3, 0), first
others = {r["rank"]: r for r in steps if r["rank"] != 1}
assert sorted(others) == [0, 2] and all(r["signal"] in (9, 15) and r["time"] >= first["time"] for r in others.values()), others
assert any(r["step"] == -1 for r in recs), "no record of the batch step"
PY
answer=$(reader "$S1" "$J1")
echo "reader: $answer"
check "the C++ reader names the same first failure" \
  [ "$(json_get "$answer" 'd["first_failure"]["node"], d["first_failure"]["rank"], d["first_failure"]["exit_code"], d["problems"]')" = "$N2 1 3 []" ]
check "each task saw its own MLSUP_NODE and a heartbeat path per node and rank" python3 - "$U" "$N1 $N2 $N3" <<'PY'
import sys
u, nodes = sys.argv[1], sys.argv[2].split()
rows = [open(f"{u}/env.{r}").read().split() for r in range(3)]
assert [row[1] for row in rows] == nodes, rows
assert [row[2] for row in rows] == [f"{u}/hb.d/{n}.{r}" for r, n in enumerate(nodes)], rows
assert all(row[3:] == ["demo", f"{u}/s1", f"{u}/hb"] for row in rows), rows
PY
check "the heartbeat directory belongs to $USER_NAME" [ "$(stat -c %U "$U/hb.d")" = "$USER_NAME" ]
check "a node record per node and step, before its health record: each node's planted GPUs, the host's addresses" \
  /usr/bin/python3 - "$(records_of "$S1" "$J1")" "$N1 $N2 $N3" "$UUID1 $UUID2" <<'PY'
import glob, ipaddress, json, os, shutil, subprocess, sys
folder, (n1, n2, n3), (u1, u2) = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
want_gpus = {n1: [{"uuid": u1, "bus": "0000:07:00.0", "model": "NVIDIA H100 80GB HBM3"}],
             n2: [{"uuid": u2, "bus": "0000:0a:00.0", "model": "NVIDIA A100-SXM4-40GB"}], n3: []}
def host_addresses():  # up, not loopback, not IPv6 link-local: what getifaddrs gives the plugin
    if shutil.which("ip"):
        flags = {}
        for line in subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.splitlines():
            f = line.split()
            flags[f[1].rstrip(":").split("@")[0]] = f[2].strip("<>").split(",")
        found = []
        for line in subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout.splitlines():
            f = line.split()
            fl = flags.get(f[1].split("@")[0], [])
            if f[2] in ("inet", "inet6") and "UP" in fl and "LOOPBACK" not in fl:
                found.append(f[3].split("/")[0])
    else:
        found = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    addrs = {ipaddress.ip_address(a.split("%")[0]) for a in found}
    return {str(a) for a in addrs if not (a.version == 6 and a.is_link_local)}
host = host_addresses()
print("host addresses:", sorted(host))
for node in (n1, n2, n3):
    lines = [json.loads(l) for l in open(f"{folder}/{node}.jsonl")]
    steps = [-1, 0] if node == n1 else [0]
    for step in steps:
        kinds = [r["kind"] for r in lines if r["step"] == step]
        records = [r for r in lines if r["step"] == step and r["kind"] == "node"]
        assert len(records) == 1 and kinds.index("node") < kinds.index("health"), (node, step, kinds)
        r = records[0]
        assert r["v"] == 1 and r["job"] == lines[0]["job"] and r["node"] == node and r["time"] > 0, r
        assert r["gpus"] == want_gpus[node], (node, r["gpus"])
        got = {str(ipaddress.ip_address(a)) for a in r["addresses"]}
        assert len(got) == len(r["addresses"]), r["addresses"]
        assert got == host if len(host) <= 32 else (len(got) == 32 and got <= host), (sorted(got), sorted(host))
PY

step "a health check failing on $N3 fails its tasks fast (exit 79) before the training runs"
echo "$N3" >"$HEALTH.bad-nodes"
S2="$U/s2"
as_user mkdir "$S2"
J2=$(submit MLSUP_STATE_DIR="$S2" -- -N3 <<EOF
#!/bin/bash
srun -n3 bash -c 'touch $U/marker.\$MLSUP_NODE; sleep 1'
EOF
)
wait_job "$J2" 60
: >"$HEALTH.bad-nodes"
check "the job failed ($(job_state "$J2"))" [ "$(job_state "$J2")" = FAILED ]
check "no training marker from $N3, markers from the others" \
  [ "$(ls "$U" | grep '^marker\.' | sort | tr '\n' ' ')" = "marker.$N1 marker.$N2 " ]
check "health records: $N3 failed with the check's message, $N1 and $N2 passed; $N3's task exited 79" python3 - "$(records_of "$S2" "$J2")" "$N1" "$N2" "$N3" <<'PY'
import glob, json, sys
recs = [json.loads(l) for f in glob.glob(sys.argv[1] + "/*.jsonl") for l in open(f)]
health = {(r["node"], r["step"]): r for r in recs if r["kind"] == "health"}
n1, n2, n3 = sys.argv[2:5]
assert not health[(n3, 0)]["ok"] and health[(n3, 0)]["exit_code"] == 1 and "marked bad" in health[(n3, 0)]["detail"], health
assert health[(n1, 0)]["ok"] and health[(n2, 0)]["ok"] and health[(n1, -1)]["ok"], health
exits = [r for r in recs if r["kind"] == "task-exit" and r["node"] == n3]
assert [r["exit_code"] for r in exits] == [79], exits
PY
answer=$(reader "$S2" "$J2")
echo "reader: $answer"
check "the C++ reader: $N3 failed its health check and failed first" \
  [ "$(json_get "$answer" 'd["failed_health"], d["first_failure"]["node"], d["first_failure"]["exit_code"]')" = "['$N3'] $N3 79" ]
check "the job's output says why" grep -q "mlsup: health: node $N3 failed the health check" "$U/job-$J2.out"

step "an unwritable state directory (root's, 0755)"
ROOTSTATE="$T/rootstate"
install -d -m 0755 "$ROOTSTATE"
J3=$(submit MLSUP_STATE_DIR="$ROOTSTATE" MLSUP_HEARTBEAT_FILE="$ROOTSTATE/hb" -- -N2 <<EOF
#!/bin/bash
srun -n2 true
EOF
)
wait_job "$J3" 60
check "the job completed ($(job_state "$J3"))" [ "$(job_state "$J3")" = COMPLETED ]
check "nothing was written there" [ -z "$(ls -A "$ROOTSTATE")" ]
check "slurmd's log says why" in_logs "mlsup: record: job $J3 on $N1: mkdir nodes/: Permission denied"

step "symlinks planted at nodes/<job>/<node>.jsonl and at nodes/<job> are not followed"
S3="$U/s3"
as_user mkdir -p "$S3/nodes" "$U/victim-dir"
echo untouched >"$T/root-victim"
as_user sh -c "echo untouched >$U/user-victim"
J4=$(submit MLSUP_STATE_DIR="$S3" -- --hold -N2 -w "$N1,$N2" <<EOF
#!/bin/bash
srun -n2 true
EOF
)
as_user mkdir "$S3/nodes/$J4"
ln -s "$T/root-victim" "$S3/nodes/$J4/$N1.jsonl"
ln -s "$U/user-victim" "$S3/nodes/$J4/$N2.jsonl"
scontrol release "$J4"
J5=$(submit MLSUP_STATE_DIR="$S3" -- --hold -N1 -w "$N3" <<EOF
#!/bin/bash
srun true
EOF
)
ln -s "$U/victim-dir" "$S3/nodes/$J5"
scontrol release "$J5"
wait_job "$J4" 60
wait_job "$J5" 60
check "both jobs completed ($(job_state "$J4"), $(job_state "$J5"))" [ "$(job_state "$J4")$(job_state "$J5")" = COMPLETEDCOMPLETED ]
check "the root-owned target is unchanged" [ "$(cat "$T/root-victim")" = untouched ]
check "the user-owned target is unchanged (O_NOFOLLOW, not only permissions)" [ "$(cat "$U/user-victim")" = untouched ]
check "the planted file links are still links" test -L "$S3/nodes/$J4/$N1.jsonl" -a -L "$S3/nodes/$J4/$N2.jsonl"
check "nothing was written through the directory link" [ -z "$(ls -A "$U/victim-dir")" ]
check "slurmd's log names the refused link" in_logs "job $J4 on $N1: open nodes/$J4/$N1.jsonl: Too many levels of symbolic links (a symlink, not followed)"
check "slurmd's log names the refused directory link" in_logs "job $J5 on $N3: open nodes/<job>: a symlink or not a directory (not followed)"

step "srun's own --mlsup-state-dir, and an array job's tasks under their own job ids"
S6="$U/s6"
as_user mkdir "$S6"
as_user srun -N2 --mlsup-state-dir="$S6" bash -c 'echo "$MLSUP_STATE_DIR" >'"$U"'/srun-env.$SLURM_PROCID' >/dev/null 2>&1
check "srun --mlsup-state-dir: records of both nodes, MLSUP_STATE_DIR in the tasks" \
  [ "$(cat "$S6"/nodes/*/*.jsonl 2>/dev/null | grep -c '"kind":"task-exit"') $(cat "$U"/srun-env.* | sort -u)" = "2 $S6" ]
S7="$U/s7"
as_user mkdir "$S7"
plugstack "gpu_info=$GPUS/%n"  # no health check: the node records are written all the same
J9=$(submit -- --array=1-2 --mlsup-state-dir="$S7" <<EOF
#!/bin/bash
srun true
EOF
)
array_done() { [ -z "$(squeue -h -j "$J9" 2>/dev/null)" ]; }
wait_until 60 array_done || echo "array $J9 did not end in 60s"
check "each array task's records are under its own job id" python3 - "$S7" <<'PY'
import glob, json, os, sys
dirs = sorted(os.listdir(sys.argv[1] + "/nodes"))
assert len(dirs) == 2, dirs
for d in dirs:
    recs = [json.loads(l) for f in glob.glob(f"{sys.argv[1]}/nodes/{d}/*.jsonl") for l in open(f)]
    assert recs and all(r["job"] == int(d) for r in recs), (d, recs)
PY
check "without a health check: one node record per array task's step (batch script, step 0), no health record" \
  /usr/bin/python3 - "$S7" <<'PY'
import glob, json, sys
for d in sorted(glob.glob(sys.argv[1] + "/nodes/*")):
    recs = [json.loads(l) for f in glob.glob(d + "/*.jsonl") for l in open(f)]
    kinds = sorted((r["kind"], r["step"]) for r in recs if r["kind"] != "task-exit")
    assert kinds == [("node", -1), ("node", 0)], (d, kinds)
PY

step "a health check that hangs is killed at health_timeout and fails the batch script's node (exit 79)"
printf '#!/bin/sh\necho checking\necho $$ >%s/check.pids\nsleep 30 &\necho $! >>%s/check.pids\nwait\n' "$U" "$U" >"$T/slow-check.sh"
chmod 0755 "$T/slow-check.sh"
plugstack "health_check=$T/slow-check.sh health_timeout=1 health_fail_job=yes"
S8="$U/s8"
as_user mkdir "$S8"
J10=$(submit MLSUP_STATE_DIR="$S8" -- -N1 -w "$N1" <<EOF
#!/bin/bash
touch $U/batch-marker
srun true
EOF
)
wait_job "$J10" 60
check "the job failed with exit code 79 ($(job_state "$J10"), $(scontrol -o show job "$J10" | grep -o ' ExitCode=[0-9:]*'))" \
  [ "$(job_state "$J10")$(scontrol -o show job "$J10" | grep -o ' ExitCode=[0-9:]*')" = "FAILED ExitCode=79:0" ]
check "the batch script never ran" [ ! -e "$U/batch-marker" ]
check "the health record says it timed out (exit 124)" \
  grep -q '"ok":false,"exit_code":124,"detail":"timed out after 1s"' "$(records_of "$S8" "$J10")/$N1.jsonl"
# True when none of the check's processes runs any more (a zombie left to init does not count).
none_alive() {
  local p st
  for p in $(cat "$U/check.pids"); do
    st=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null) || continue
    [ -z "$st" ] || [ "$st" = Z ] || { echo "pid $p: state $st, $(tr '\0' ' ' <"/proc/$p/cmdline")"; return 1; }
  done
}
check "the check and its child were killed ($(tr '\n' ' ' <"$U/check.pids"))" none_alive

step "bad plugstack arguments under required: the plugin reports and does nothing"
plugstack "helth_check=$HEALTH health_timeout=soon"
S4="$U/s4"
as_user mkdir "$S4"
J6=$(submit MLSUP_STATE_DIR="$S4" -- -N3 <<EOF
#!/bin/bash
#SBATCH --mlsup-run=still-parses
srun -n3 true
EOF
)
wait_job "$J6" 60
check "the job completed ($(job_state "$J6"))" [ "$(job_state "$J6")" = COMPLETED ]
check "no records" [ -z "$(ls -A "$S4")" ]
check "slurmd's log names the unknown key and the known ones" \
  in_logs 'mlsup: config: unknown key "helth_check" (known: health_check, health_timeout, health_fail_job, heartbeat_per_task, records, allow_root, node_facts, gpu_info)'

step "a health check that cannot run does not fail the job; node_facts=no writes no node record"
plugstack "health_check=$T/no-such-check health_fail_job=yes node_facts=no gpu_info=$GPUS/%n"
S5="$U/s5"
as_user mkdir "$S5"
J7=$(submit MLSUP_STATE_DIR="$S5" -- -N2 <<EOF
#!/bin/bash
srun -n2 true
EOF
)
wait_job "$J7" 60
check "the job completed ($(job_state "$J7"))" [ "$(job_state "$J7")" = COMPLETED ]
kinds=$(cat "$(records_of "$S5" "$J7")"/*.jsonl 2>/dev/null | grep -o '"kind":"[a-z-]*"' | sort | uniq -c | tr -s ' ')
check "three task records, no health record, no node record ($kinds)" [ "$kinds" = ' 3 "kind":"task-exit"' ]
check "slurmd's log says the check could not run" in_logs "mlsup: health: cannot run $T/no-such-check"

step "a root job: no health check and no records unless allow_root=yes"
echo "$N1" >"$HEALTH.bad-nodes"  # the check would fail the job if it ran
plugstack "health_check=$HEALTH health_fail_job=yes"
SR="$T/root-state"
mkdir -p "$SR"
root_job() { MLSUP_STATE_DIR="$SR" timeout 30 sbatch --parsable -N1 -w "$N1" -o "$T/root-%j.out" --wrap 'srun true'; }
J11=$(root_job)
wait_job "$J11" 60
check "the root job completed ($(job_state "$J11"))" [ "$(job_state "$J11")" = COMPLETED ]
check "no records for it" [ ! -e "$(records_of "$SR" "$J11")" ]
check "slurmd's log says why" in_logs "mlsup: user: job $J11 on $N1: the job runs as root (allow_root=yes in plugstack.conf permits it)"
plugstack "health_check=$HEALTH health_fail_job=yes allow_root=yes"
J12=$(root_job)
wait_job "$J12" 60
check "with allow_root=yes the check runs and fails the root job (exit 79)" \
  [ "$(job_state "$J12")$(scontrol -o show job "$J12" | grep -o ' ExitCode=[0-9:]*')" = "FAILED ExitCode=79:0" ]
check "and its health record is written" grep -q '"kind":"health"' "$(records_of "$SR" "$J12")/$N1.jsonl"
: >"$HEALTH.bad-nodes"

step "jobs without mlsup are left alone"
J8=$(submit -- -N1 <<EOF
#!/bin/bash
echo "node=\${MLSUP_NODE:-unset}"
EOF
)
wait_job "$J8" 60
check "no MLSUP_NODE in an unsupervised job" grep -qx 'node=unset' "$U/job-$J8.out"

check "no node is drained or down" no_node_drained
sinfo -N -o '%N %T %E'
finish
