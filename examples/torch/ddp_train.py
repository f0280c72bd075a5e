#!/usr/bin/python3
"""A small real training: PyTorch DDP on CPU (gloo), one process per rank as torchrun starts them,
on mlsup's contract through mlsup_train (heartbeat with each rank's own compute, switches and signal,
fencing, atomic checkpoints).

Everything that decides the weights is a function of the seed and the step (the data of step s on
rank r, the initial weights), and a checkpoint holds the model, the optimizer and the step, so a
training resumed any number of times ends with the same bytes as one that ran through. At the end
rank 0 writes the weights and their SHA-256 into --out.

    torchrun --standalone --nproc_per_node=2 ddp_train.py --steps 200 --out /tmp/ref   # no mlsup
    # under mlsup: templates/torchrun.sbatch.tmpl with vars.script pointing here (examples/torch/README.md)
"""

import argparse
import datetime
import hashlib
import os
import re
import subprocess
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import mlsup_train as mt


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, required=True, help="train to this step")
    p.add_argument("--ckpt-every", type=int, default=20, help="save every N steps (0: only when mlsup asks)")
    p.add_argument("--step-seconds", type=float, default=0.0, help="sleep this long after each step (pacing)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--out", required=True, help="folder for the final weights.pt and weights.sha256 (rank 0)")
    p.add_argument("--crash-file", default="", help="tests: the rank that takes this file (a rename) is killed")
    p.add_argument("--stall-file", default="", help="tests: rank 1 takes this file (a rename) and stops for good")
    p.add_argument("--oom-file", default="", help="tests: rank 1 takes this file (a rename) and raises CUDA's out of memory")
    p.add_argument("--slow-file", default="", help="tests: while this file exists, rank 1 is slow in its own compute")
    p.add_argument("--slow-seconds", type=float, default=0.2, help="tests: how much slower (a sleep in its forward)")
    p.add_argument("--node-addr-group", action="store_true",
                   help="the gradients go over a gloo group in which each rank listens on its node's Slurm NodeAddr, "
                        "as where every node has an address of its own (the local test cluster's --node-addrs)")
    return p.parse_args(argv)


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))


def batch(seed, step, rank):
    """Step `step`'s data on `rank`: the same on every run."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + step * 101 + rank)
    x = torch.randn(32, 16, generator=g)
    return x, torch.sin(x.sum(dim=1, keepdim=True))


def weights_digest(model):
    h = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        h.update(name.encode())
        h.update(tensor.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def write_whole(path, write):
    tmp = f"{path}.tmp{os.getpid()}"
    write(tmp)
    os.replace(tmp, path)


def crash_if_asked(path):
    """Tests: the first rank to rename the file away dies of SIGKILL, as a segfault would end it."""
    if path and os.path.exists(path):
        try:
            os.rename(path, f"{path}.taken")
        except OSError:
            return
        print(f"rank {dist.get_rank()}: crashing as asked ({path})", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)


def stall_if_asked(path):
    """Tests: rank 1 takes the file and stops in Python for good; the other ranks wait for it in a collective."""
    if take_as_rank_1(path, "stalling"):
        while True:
            time.sleep(60)


def take_as_rank_1(path, what):
    """Tests: rank 1 takes the file (a rename) when it is there; True when it did."""
    if not path or dist.get_rank() != 1 or not os.path.exists(path):
        return False
    try:
        os.rename(path, f"{path}.taken")
    except OSError:
        return False
    print(f"rank 1: {what} as asked ({path})", file=sys.stderr, flush=True)
    return True


def oom_if_asked(path):
    """Tests: rank 1 fails as PyTorch does when an allocation does not fit on the GPU (torch's own words)."""
    if take_as_rank_1(path, "running out of GPU memory"):
        raise torch.cuda.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 76.02 GiB already "
            "allocated; 1.06 GiB free; 77.10 GiB reserved in total by PyTorch)")


def node_addr():
    """This node's NodeAddr as Slurm gives it (scontrol), else 127.0.0.1."""
    node = os.environ.get("SLURMD_NODENAME", "")
    said = subprocess.run(["scontrol", "-o", "show", "node", node], capture_output=True, text=True, timeout=60).stdout
    found = re.search(r" NodeAddr=(\S+)", said)
    return found.group(1) if found else "127.0.0.1"


def node_addr_group():
    """A gloo group over every rank in which each listens on its node's address (rendezvous: the default store)."""
    options = dist.ProcessGroupGloo._Options()
    options._devices = [dist.ProcessGroupGloo.create_device(hostname=node_addr())]
    options._timeout = datetime.timedelta(seconds=60)
    store = dist.PrefixStore("node-addr", dist.distributed_c10d._get_default_store())
    return dist.ProcessGroupGloo(store, dist.get_rank(), dist.get_world_size(), options)


def main(argv):
    args = parse_args(argv)
    job = mt.init(layout="glob", complete_marker="COMPLETE")  # first: the pre-timeout signal is a flag from here on
    torch.set_num_threads(1)  # one thread: the same summation order whatever the node's CPU count
    torch.use_deterministic_algorithms(True)
    dist.init_process_group("gloo")
    rank = dist.get_rank()

    model = make_model(args.seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    step = 0
    if job.resume_path():
        state = torch.load(os.path.join(job.resume_path(), "state.pt"))
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
        if rank == 0:
            print(f"resumed from {job.resume_path()} at step {step}", file=sys.stderr, flush=True)
    ddp = DistributedDataParallel(model, process_group=node_addr_group() if args.node_addr_group else None)
    job.time_ddp(ddp)  # this rank's gradients ready: its compute ends there (the heartbeat's compute=)
    if args.slow_file and rank == 1:
        node = os.environ.get("SLURMD_NODENAME", "?")
        print(f"rank 1 on {node}: slow in its compute while {args.slow_file} exists", file=sys.stderr, flush=True)

    while step < args.steps:
        x, y = batch(args.seed, step, rank)
        optimizer.zero_grad()
        with job.computing():
            loss = F.mse_loss(ddp(x), y)
            if args.slow_file and rank == 1 and os.path.exists(args.slow_file):
                time.sleep(args.slow_seconds)  # tests: a straggler (a slow GPU, a throttled CPU)
            loss.backward()
        optimizer.step()
        step += 1
        crash_if_asked(args.crash_file)
        stall_if_asked(args.stall_file)
        oom_if_asked(args.oom_file)
        job.heartbeat(step)
        if args.step_seconds:
            time.sleep(args.step_seconds)
        asked = job.should_save()  # a collective: every rank asks at every step
        if (asked or (args.ckpt_every and step % args.ckpt_every == 0)) and job.checkpoint_dir:
            with job.checkpoint(step) as ckpt:
                if ckpt.dir:
                    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
                    torch.save(state, os.path.join(ckpt.dir, "state.pt"))
        if job.should_stop():
            print(f"rank {rank}: stopping at step {step} ({', '.join(job.stop_reasons())})", file=sys.stderr, flush=True)
            return 0

    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        write_whole(os.path.join(args.out, "weights.pt"), lambda p: torch.save(model.state_dict(), p))
        digest = weights_digest(model)
        write_whole(os.path.join(args.out, "weights.sha256"), lambda p: open(p, "w").write(digest + "\n"))
        print(f"trained to step {step}; weights sha256 {digest}", file=sys.stderr, flush=True)
    dist.barrier()  # every rank ends once rank 0's files are in place
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # A hard exit, past the process group's teardown: under load, rank 0 once stayed after writing
    # its weights, its peer gone, until a 300 s timeout killed it (gloo; where exactly is not known).
    os._exit(code)
