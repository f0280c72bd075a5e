"""Every rank's Python stacks at a hang: faulthandler registered for mlsup's MLSUP_STACKS_SIGNAL.

At startup each rank makes its own file, <MLSUP_HANG_DIR>/rank-<R>.txt, whose first line names the rank,
its node and its pid. When mlsup declares a hang it signals the job's steps, and faulthandler appends
every thread's stack from inside the signal handler, so a rank blocked in C (a collective) dumps too.
"""

import faulthandler
import os
import signal
import sys

from . import contract as contracts

_open = []  # the files faulthandler writes into: kept open for the process's life


def _say(message):
    print(f"mlsup_train: {message}", file=sys.stderr, flush=True)


def _forget_in_child(signum):
    """A forked child (a dataloader worker) neither dumps into the rank's file nor dies of the signal."""
    try:
        faulthandler.unregister(signum)
        signal.signal(signum, signal.SIG_IGN)
    except (ValueError, OSError):
        pass


def register(contract, rank, environ):
    """Registers the rank's stack dump for the contract's signal; returns the file's path ("" when not asked)."""
    if not contract.stacks_signal or not contract.hang_dir:
        return ""
    signum = getattr(signal, "SIG" + contract.stacks_signal, None)
    if signum is None:
        _say(f"MLSUP_STACKS_SIGNAL={contract.stacks_signal} names no signal of this system: no stacks at a hang")
        return ""
    path = os.path.join(contract.hang_dir, f"rank-{rank}.txt")
    try:
        os.makedirs(contract.hang_dir, exist_ok=True)
        out = open(path, "a", buffering=1)  # appended: mlsup marks the file before it asks
    except OSError as e:
        _say(f"cannot make {path} ({e}): no stacks at a hang")
        return ""
    node = contracts.node_of(contract, environ)
    out.write(f"mlsup stacks: rank={rank} node={node} pid={os.getpid()}\n")
    out.flush()
    faulthandler.register(signum, file=out, all_threads=True, chain=False)
    os.register_at_fork(after_in_child=lambda: _forget_in_child(signum))
    _open.append(out)
    return path
