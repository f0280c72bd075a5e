"""mlsup's multi-node preflight: one all-reduce over every node of the allocation, with a deadline.

Run as one task per node before the training (the shipped templates do it when the config sets
preflight.command, handing MLSUP_PREFLIGHT_NODES, the job's nodes in order, and
MLSUP_PREFLIGHT_DEADLINE in seconds):

    srun --ntasks-per-node=1 python3 -m mlsup_train.preflight [--backend gloo|nccl]

Task R runs on node R of the list. Every task first joins a store on the first node; the one there
waits for the others until the deadline and names each node whose task did not join, in a line of
its own that mlsup's evidence rule `preflight_absent` reads:

    mlsup preflight: rank 2 on n3 did not join within 60 s

and exits 3. When all joined, one all-reduce runs over every node (gloo on CPU, nccl on GPUs); a
failure there is printed with the library's own message (a peer's address in it) and exits 4.
Exit 0: every node took part and the sum was right. Needs torch.
"""

import argparse
import datetime
import os
import socket
import sys
import time

ABSENT_EXIT = 3   # a node's task did not join the store in time
REDUCE_EXIT = 4   # every task joined, but the all-reduce failed or gave a wrong sum
STORE_EXIT = 5    # this task could not reach the store, or heard no verdict from it


def _say(message):
    print(f"mlsup preflight: {message}", file=sys.stderr, flush=True)


class Place:
    """Where this task stands: its rank, the job's nodes in order, the store's address, the deadline."""

    def __init__(self, environ):
        self.nodes = [n for n in environ.get("MLSUP_PREFLIGHT_NODES", "").split(",") if n]
        self.rank = int(environ.get("SLURM_PROCID", environ.get("RANK", "0")))
        self.world = int(environ.get("SLURM_NTASKS", environ.get("WORLD_SIZE", str(len(self.nodes) or 1))))
        self.node = environ.get("SLURMD_NODENAME") or socket.gethostname()
        self.deadline = float(environ.get("MLSUP_PREFLIGHT_DEADLINE", "120"))
        self.master = environ.get("MASTER_ADDR") or (self.nodes[0] if self.nodes else "127.0.0.1")
        job = int(environ.get("SLURM_JOB_ID", "0"))
        self.port = int(environ.get("MLSUP_PREFLIGHT_PORT") or 30000 + job % 2700)  # below the ephemeral ports (32768)

    def node_of(self, rank):
        """The node rank `rank` runs on (the list's order), or "rank <R>'s node" without a list."""
        return self.nodes[rank] if rank < len(self.nodes) else f"rank {rank}'s node"


def mark(store, prefix, rank):
    """Says in the store that `rank` reached `prefix` (a counter: torch's older stores cannot ask for a key)."""
    store.add(f"{prefix}/{rank}", 1)


def absent(store, prefix, ranks, until):
    """The ranks of `ranks` not marked at `prefix` by monotonic time `until` (adding 0 reads without waiting)."""
    while True:
        missing = [r for r in ranks if store.add(f"{prefix}/{r}", 0) == 0]
        if not missing or time.monotonic() >= until:
            return missing
        time.sleep(0.05)


def rendezvous(place, store, started):
    """Rank 0: the verdict on who joined, told to the store; others: wait for it. Returns an exit code or None."""
    mark(store, "joined", place.rank)
    if place.rank != 0:
        try:
            store.wait(["verdict"], datetime.timedelta(seconds=place.deadline + 10))
            verdict = store.get("verdict")
            mark(store, "heard", place.rank)
        except RuntimeError as e:
            _say(f"rank {place.rank} on {place.node}: no verdict from rank 0 on {place.node_of(0)} ({e})")
            return STORE_EXIT
        return None if verdict == b"joined" else 0  # the others' absence is rank 0's to tell
    ranks = range(place.world)
    missing = absent(store, "joined", ranks, started + place.deadline)
    for r in missing:
        _say(f"rank {r} on {place.node_of(r)} did not join within {place.deadline:g} s")
    store.set("verdict", "absent" if missing else "joined")
    # The store lives in this process: it stays until the ranks that joined have read the verdict.
    absent(store, "heard", [r for r in ranks if r != 0 and r not in missing], time.monotonic() + 5)
    return ABSENT_EXIT if missing else None


def all_reduce(place, store, backend, started):
    """One all-reduce of ones over every rank; returns the exit code."""
    import torch
    import torch.distributed as dist

    left = max(5.0, started + place.deadline - time.monotonic())
    try:
        dist.init_process_group(backend, store=dist.PrefixStore("reduce", store), rank=place.rank,
                                world_size=place.world, timeout=datetime.timedelta(seconds=left))
        device = "cuda" if backend == "nccl" else "cpu"
        if device == "cuda":
            torch.cuda.set_device(int(os.environ.get("SLURM_LOCALID", "0")))
        ones = torch.ones(1, device=device)
        dist.all_reduce(ones)
        total = int(ones.item())
    except Exception as e:  # the library's own words name the peer; mlsup's rules read them
        _say(f"rank {place.rank} on {place.node}: the all-reduce failed: {e}")
        return REDUCE_EXIT
    if total != place.world:
        _say(f"rank {place.rank} on {place.node}: the all-reduce gave {total}, not {place.world}")
        return REDUCE_EXIT
    mark(store, "reduced", place.rank)
    if place.rank == 0:  # the store stays until every rank is done with it
        late = absent(store, "reduced", range(place.world), max(time.monotonic() + 5, started + place.deadline))
        for r in late:
            _say(f"rank {r} on {place.node_of(r)} did not finish the all-reduce")
        if late:
            return REDUCE_EXIT
    return 0


def _leave_group():
    """Ends the process group, if one was made: torch aborts at exit while gloo's threads are still joinable."""
    import torch.distributed as dist

    try:
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception as e:  # leaving is best effort; the verdict is already told
        _say(f"could not end the process group cleanly: {e}")


def run(place, backend):
    """The preflight of this task; returns its exit code."""
    started = time.monotonic()
    try:
        import torch.distributed as dist
    except ImportError as e:
        _say(f"needs torch ({e})")
        return STORE_EXIT
    try:
        store = dist.TCPStore(place.master, place.port, place.world, place.rank == 0,
                              timeout=datetime.timedelta(seconds=place.deadline), wait_for_workers=False)
    except (RuntimeError, OSError) as e:
        _say(f"rank {place.rank} on {place.node}: cannot reach the store on {place.master}:{place.port} ({e})")
        return STORE_EXIT
    code = rendezvous(place, store, started)
    if code is not None:
        return code
    try:
        code = all_reduce(place, store, backend, started)
    finally:
        _leave_group()
    if code == 0 and place.rank == 0:
        _say(f"{place.world} nodes joined and reduced in {time.monotonic() - started:.1f} s")
    return code


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m mlsup_train.preflight", description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("gloo", "nccl"), default=None,
                        help="the all-reduce's backend (default: nccl where CUDA is available, else gloo)")
    args = parser.parse_args(argv)
    backend = args.backend
    if backend is None:
        try:
            import torch
            backend = "nccl" if torch.cuda.is_available() else "gloo"
        except ImportError:
            backend = "gloo"
    return run(Place(os.environ), backend)


if __name__ == "__main__":
    sys.exit(main())
