"""A rank's own compute time per step, outside the collectives it waits in.

In synchronous data parallelism every rank steps at the same rate: the slow one holds the others in
their all-reduce, so step times cannot tell it. Its own compute can: the time from the start of the
work to the moment its own gradients were ready. The training marks the work (`with job.computing():`
around forward and backward); with DDP, `job.time_ddp(model)` also registers a communication hook
that notes when each gradient bucket is ready on this rank, so the wait for the others at the end of
backward is left out. The heartbeat then carries `compute=<seconds>` for the step.
"""

import contextlib
import time


class ComputeTimer:
    """Sums the compute of the blocks marked since the last take(); clock: seconds, monotonic."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._total = None  # seconds since the last take(); None: nothing marked
        self._ready = None  # when this rank's last gradient bucket was ready, inside the current block

    @contextlib.contextmanager
    def computing(self):
        """Marks the block as compute; with a DDP hook, it ends where this rank's last bucket was ready."""
        start = self._clock()
        self._ready = None
        try:
            yield
        finally:
            end = self._ready if self._ready is not None and self._ready >= start else self._clock()
            self._total = (self._total or 0.0) + (end - start)
            self._ready = None

    def bucket_ready(self):
        """Called by the DDP hook when one of this rank's gradient buckets is ready to be reduced."""
        self._ready = self._clock()

    def take(self):
        """The compute summed since the last take (None when no block was marked), and a fresh start."""
        total, self._total = self._total, None
        return total


def ddp_hook(timer):
    """A DDP communication hook that notes the bucket's readiness on `timer`, then averages it as DDP does."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    def hook(process_group, bucket):
        timer.bucket_ready()
        return default_hooks.allreduce_hook(process_group, bucket)

    return hook
