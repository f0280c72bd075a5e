"""Which rank this process is, and the collectives the helper needs: torch.distributed when the
training initialised it, else a world of one (each process on its own).

torch is never imported here: a training that initialised a process group has imported it already.
"""

import os
import sys


def _torch_dist():
    """torch.distributed when the training imported it and initialised the default group, else None."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def _env_int(environ, names, default):
    for name in names:
        text = environ.get(name, "").strip()
        if text.isdigit():
            return int(text)
    return default


def rank(environ=None):
    """This process's global rank: torch.distributed's, else RANK (torchrun), else SLURM_PROCID, else 0."""
    dist = _torch_dist()
    if dist is not None:
        return dist.get_rank()
    return _env_int(os.environ if environ is None else environ, ("RANK", "SLURM_PROCID"), 0)


def world_size(environ=None):
    """The number of ranks: torch.distributed's, else WORLD_SIZE, else SLURM_NTASKS, else 1."""
    dist = _torch_dist()
    if dist is not None:
        return dist.get_world_size()
    return max(1, _env_int(os.environ if environ is None else environ, ("WORLD_SIZE", "SLURM_NTASKS"), 1))


def _device(dist):
    """Where a tensor for the default group's collectives lives (NCCL needs this rank's GPU)."""
    torch = sys.modules["torch"]
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_max(values):
    """The element-wise maximum of `values` (a list of ints) over every rank; `values` itself in a world of one.

    Every rank must call it at the same point, as any collective.
    """
    dist = _torch_dist()
    if dist is None or dist.get_world_size() == 1:
        return list(values)
    torch = sys.modules["torch"]
    tensor = torch.tensor(list(values), dtype=torch.int64, device=_device(dist))
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return [int(v) for v in tensor.tolist()]

