# Helpers the benchmarks and the integration suites share; sourced, not run.

# Jobs run `python3` from the PATH they inherit from mlsup. A version manager's shim first on PATH
# (pyenv's is a shell script that looks the version up) made each rank's start cost several
# processes: 64 ranks on 2 cores met 30 s later than with the interpreter itself. Debian's first.
export PATH="/usr/bin:$PATH"

# True when every node of the cluster is idle.
all_nodes_idle() {
  [ "$(sinfo -h -N -t idle -o '%N' | sort -u | wc -l)" -ge "$(sinfo -h -N -o '%N' | sort -u | wc -l)" ]
}

# After a node fault: waits up to $1 seconds (default 60) until every node is idle, so the next case
# starts as the first did. A node that came back drained because its slurmd could not kill a frozen
# step in time (reason "Kill task failed"), or down although its slurmd answers again (a thawed node
# Slurm had marked not responding), is resumed, and that is said on stderr, by $2 (the script).
nodes_idle_again() {
  local node limit=${1:-60} prog=${2:-benchmark}
  for _ in $(seq $((2 * limit))); do
    for node in $(sinfo -h -N -t drain -o '%N %E' | awk '/Kill task failed/ { print $1 }' | sort -u); do
      echo "$prog: $node came back drained (Kill task failed); resuming it" >&2
      scontrol update NodeName="$node" State=RESUME
    done
    for node in $(sinfo -h -N -t down -o '%N %T' | awk '$2 == "down" { print $1 }' | sort -u); do
      echo "$prog: $node answers again but is down; resuming it" >&2
      scontrol update NodeName="$node" State=RESUME
    done
    all_nodes_idle && return 0
    sleep 0.5
  done
}

# A campaign as mlsup itself shows it: its state is read through `mlsup status --json` and
# `mlsup events --json`, never from the files of its state folder.

# Prints a Python expression over `mlsup status CONFIG --json` (s; the arguments after it are args): a
# list one item per line, None as nothing. mlsup_status_query MLSUP CONFIG EXPR [ARGS...]
mlsup_status_query() {
  local mlsup=$1 config=$2; shift 2
  "$mlsup" status "$config" --json --history all | /usr/bin/python3 -c 'import json,sys
s, args = json.load(sys.stdin), sys.argv[2:]
v = eval(sys.argv[1])
for x in v if isinstance(v, list) else [v]:
    if x is not None: print(x)' "$@"
}

# The job of attempt N (chain mode: the array), nothing until it is submitted or while status cannot
# answer (before the first pass). One `status --json` and one python3 (about 40 ms of CPU): a poll of
# it belongs outside a measured window, or at a slow rate. attempt_job MLSUP CONFIG N
attempt_job() {
  mlsup_status_query "$1" "$2" 'next((a["job_id"] for a in s["history"] if a["number"] == int(args[0])), None)' "$3" 2>/dev/null
}

# The time (epoch seconds) of the first event KIND of attempt N, nothing while there is none:
# event_time MLSUP CONFIG KIND N
event_time() {
  "$1" events "$2" --json --kind "$3" 2>/dev/null | /usr/bin/python3 -c 'import json,sys
print(next((e["time"] for e in map(json.loads, filter(str.strip, sys.stdin)) if e.get("attempt") == int(sys.argv[1])), ""))' "$4"
}

# Writes to $1 a one-node batch script that may begin in two hours: its job waits in the queue, so that
# a campaign submitting it has nothing to do but wait (the local cluster runs a handful of jobs at once).
pending_job_script() {
  printf '#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --begin=now+2hours\n#SBATCH --output=/dev/null\nsleep 60\n' > "$1"
}

# slurmctld's count of RPCs of message type $1 so far (sdiag; 0 before the first).
sdiag_count() { sdiag | awk -v t="$1" '$1 == t { sub("count:", "", $4); print $4; f = 1; exit } END { if (!f) print 0 }'; }

# A campaign's journal of about RECORDS records: attempts that were preempted and resubmitted, a month
# ago (intent, submission, ending: three records each). INDEX makes the campaign's id.
# preempted_journal PATH NAME RECORDS INDEX
preempted_journal() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys, time
path, name, records, index = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cid = "%08x" % (0x10000000 + index)
t = time.time() - max(30 * 86400, records * 60 + 3600)  # every record in the past
seq = 0
def line(f, kind, **fields):
    global seq, t
    seq += 1
    t += 60
    f.write(json.dumps(dict(seq=seq, time=t, type=kind, epoch=1, **fields)) + "\n")
with open(path, "w") as f:
    f.write(json.dumps({"mlsup_journal": 1, "campaign": name}) + "\n")
    line(f, "campaign", id=cid, name=name)
    for attempt in range(1, max(2, records // 3) + 1):
        tag = "mlsup:%s:%s:%d" % (name, cid, attempt)
        line(f, "submit-intent", attempt=attempt, tag=tag, resume_from="/ckpt/step_%d" % attempt, resume_step=attempt,
             exclude=[])
        line(f, "submitted", attempt=attempt, job_id=900000 + attempt, chain=False)
        line(f, "ended", attempt=attempt, job_id=900000 + attempt, **{"class": "preempted"}, slurm_state="PREEMPTED",
             exit_code=0, signal=0, nodes="n1", step=attempt * 10, checkpoint_step=attempt * 10,
             resumed_from="/ckpt/step_%d" % attempt, progressed=True, action="resubmit", delay=0,
             reason="preempted: resubmitted")
PY
}

# Starts a private cluster (tests/cluster/cluster.sh start OPTIONS..., from the repository's root)
# unless SLURM_CONF names one; own_cluster is its folder ("" when none was started), for the caller
# to stop at its exit. cluster_unless_given OPTIONS...
cluster_unless_given() {
  own_cluster=""
  [ -z "${SLURM_CONF:-}" ] || return 0
  own_cluster=$(mktemp -d /tmp/mlsup-bench-cluster.XXXXXX)
  export "$(tests/cluster/cluster.sh start --dir "$own_cluster" "$@")"
}
