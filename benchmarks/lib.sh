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
