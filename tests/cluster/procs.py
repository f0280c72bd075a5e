#!/usr/bin/python3
"""Lists every live process of one local cluster as lines "PID KIND NODE JOBID", in one pass over
/proc (cluster.sh's list_procs; a shell loop took 36 s at 66 nodes).

KIND is munged, slurmctld, slurmd, slurmstepd, helper (another child of a daemon, e.g.
slurmscriptd) or task; NODE and JOBID are "-" when unknown or not applicable. Daemons are
recognised by their command line (it names the cluster's files), a slurmstepd by what it has open
(its step socket under DIR/spool/NODE/, or DIR/log/slurmd-NODE.log; the MLSUP_NODE variable that
slurmd passes on is the last resort: its process title wipes most of its environment), a helper by
the MLSUP_CLUSTER_DIR variable every daemon of the cluster starts with, a task by SLURM_JOB_ID plus
the cluster's SLURM_CLUSTER_NAME (SLURM_CONF alone is not enough: any shell that sourced DIR/env
has it) or by descending from a slurmstepd of the cluster. The caller (--caller PID), its
ancestors, its children and this program are never listed.
"""
import argparse
import os


def read(path, mode="rb"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return None


def stat_of(pid):
    """(state letter, parent pid) of a process, or None when it is gone."""
    text = read(f"/proc/{pid}/stat", "r")
    if not text:
        return None
    fields = text[text.rfind(")") + 2:].split()
    return fields[0], int(fields[1])


def argv_of(pid):
    raw = read(f"/proc/{pid}/cmdline")
    return [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]] if raw else []


def env_of(pid):
    raw = read(f"/proc/{pid}/environ")
    if raw is None:
        return None
    env = {}
    for entry in raw.split(b"\0"):
        key, sep, value = entry.decode(errors="replace").partition("=")
        if sep:
            env[key] = value
    return env


def option(argv, name):
    """The value of option NAME given as "NAME VALUE", or None."""
    for i, a in enumerate(argv[:-1]):
        if a == name:
            return argv[i + 1]
    return None


def step_sockets(spool):
    """Socket inode -> node, for every unix socket a slurmstepd listens on under DIR/spool/NODE/."""
    sockets = {}
    for line in (read("/proc/net/unix", "r") or "").splitlines()[1:]:
        cols = line.split()
        if len(cols) >= 8 and cols[7].startswith(spool):
            sockets[cols[6]] = cols[7][len(spool):].split("/")[0]
    return sockets


def stepd_node(pid, a, sockets):
    """The node of slurmstepd PID when it belongs to the cluster, else None."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        fds = []
    log_prefix = f"{a.dir}/log/slurmd-"
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in sockets:
            return sockets[link[8:-1]]
        if link.startswith(log_prefix) and link.endswith(".log"):
            return link[len(log_prefix):-4]
    env = env_of(pid) or {}
    if env.get("MLSUP_CLUSTER_DIR") == a.dir and env.get("MLSUP_NODE"):
        return env["MLSUP_NODE"]
    return None


def classify(pid, argv, a, sockets):
    """(kind, node, job) of a process of the cluster, or None."""
    name = argv[0].split("/")[-1]
    if name == "munged":
        return ("munged", "-", "-") if f"--socket={a.munge_sock}" in argv else None
    if name in ("slurmctld", "slurmd"):
        if option(argv, "-f") != a.conf:
            return None
        node = (option(argv, "-N") or "-") if name == "slurmd" else "-"
        return (name, node, "-")
    if name.startswith("slurmstepd"):
        node = stepd_node(pid, a, sockets)
        if node is None:
            return None
        job = argv[0].partition("[")[2].partition(".")[0]
        return ("slurmstepd", node, job if job.isdigit() else "-")
    env = env_of(pid)
    if env is None:
        return None
    if env.get("SLURM_JOB_ID") and env.get("SLURM_CLUSTER_NAME") == a.cluster:
        return ("task", env.get("SLURMD_NODENAME") or "-", env["SLURM_JOB_ID"])
    if env.get("MLSUP_CLUSTER_DIR") == a.dir:
        return ("helper", env.get("MLSUP_NODE") or "-", "-")
    return None


def main():
    p = argparse.ArgumentParser()
    for opt in ("--dir", "--conf", "--munge-sock", "--cluster"):
        p.add_argument(opt, required=True)
    p.add_argument("--caller", type=int, required=True)
    a = p.parse_args()

    skip, up = set(), os.getpid()
    while up > 0:  # this program and its ancestors, the caller among them
        skip.add(up)
        s = stat_of(up)
        up = s[1] if s else 0

    parent, live = {}, []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in skip:
            s = stat_of(int(entry))
            if s and s[0] != "Z":
                parent[int(entry)] = s[1]
                live.append(int(entry))

    sockets = step_sockets(f"{a.dir}/spool/")
    found = {}
    for pid in live:
        argv = argv_of(pid)
        if argv:
            what = classify(pid, argv, a, sockets)
            if what:
                found[pid] = what

    changed = True  # descendants of a slurmstepd are its tasks, even if they dropped Slurm's variables
    while changed:
        changed = False
        for pid in live:
            up = found.get(parent[pid])
            if pid not in found and up and up[0] in ("slurmstepd", "task"):
                found[pid] = ("task", up[1], up[2])
                changed = True

    def under_caller(pid):
        for _ in range(64):
            pid = parent.get(pid, 0)
            if pid <= 1:
                return False
            if pid == a.caller:
                return True
        return False

    print("".join(f"{pid} {k} {n} {j}\n" for pid, (k, n, j) in found.items() if not under_caller(pid)), end="")


if __name__ == "__main__":
    main()
