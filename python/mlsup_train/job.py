"""One attempt of a training under mlsup, as the training sees it: the Job ties the pieces together."""

import contextlib
import os
import signal
import sys
import threading

from . import checkpoints, contract, decide, files, memory, ranks, stacks, timing
from .heartbeat_file import Heartbeat


def say(message):
    """One line on stderr, for the job's log."""
    print(f"mlsup_train: {message}", file=sys.stderr, flush=True)


class _SignalFlag:
    """Remembers that one of `signals` arrived (the pre-timeout signal); the training acts on it at its next check."""

    def __init__(self, signals):
        self.received = None  # the first signal's number
        self._previous = {}
        if threading.current_thread() is not threading.main_thread():
            say("the Job was made outside the main thread: the pre-timeout signal is not caught")
            return
        for signum in signals:
            self._previous[signum] = signal.signal(signum, self._handle)

    def _handle(self, signum, frame):
        if self.received is None:
            self.received = signum
        previous = self._previous.get(signum)
        if callable(previous):
            previous(signum, frame)


class Job:
    """mlsup's contract for one process of the training.

    layout and complete_marker say how checkpoints are saved; they should match the campaign's
    checkpoint.layout and checkpoint.complete_marker (the helper writes the marker in every layout,
    so a config that names it works with any). reduce replaces the all-reduce (tests).
    per_rank_heartbeats: every rank writes a heartbeat file of its own (contract.rank_heartbeat_file),
    with the SPANK plugin or without it; False: without the plugin, rank 0 alone writes mlsup's file.
    """

    def __init__(self, *, layout="glob", complete_marker=checkpoints.DEFAULT_MARKER, checkpoint_dir=None,
                 signals=None, memory_limit=None, memory_floor=None, keepalive_seconds=1.0,
                 environ=None, reduce=None, per_rank_heartbeats=True):
        self.contract = contract.from_environment(environ)
        self._environ = os.environ if environ is None else environ
        self.layout = checkpoints.layout_of(layout)
        self.complete_marker = complete_marker
        self.checkpoint_dir = checkpoint_dir or self.contract.checkpoint_dir
        self.memory = memory.Thresholds.parse(memory_limit, memory_floor)
        self._reduce = reduce or ranks.all_reduce_max
        if signals is None:  # the signal the campaign's config names (slurm.signal), handed as MLSUP_SIGNAL
            wanted = self.contract.pre_timeout_signal
            if wanted is None:
                say(f"MLSUP_SIGNAL={self.contract.signal} names no signal of this system: SIGUSR1 is caught instead")
            signals = (wanted or signal.SIGUSR1,)
        self._signal = _SignalFlag(signals)
        self.stacks_file = stacks.register(self.contract, ranks.rank(self._environ), self._environ)
        rank = ranks.rank(self._environ)
        node = contract.node_of(self.contract, self._environ)
        path = contract.rank_heartbeat_file(self.contract, rank, node) if per_rank_heartbeats else self.contract.heartbeat_file
        writes = per_rank_heartbeats or self.contract.heartbeat_per_task or rank == 0
        self.heartbeat_writer = Heartbeat(path, writes, keepalive_seconds)
        self.timer = timing.ComputeTimer()
        self.decision = None
        self._asked = set()  # which of "save", "stop" the current decision has answered
        self._told = ()

    # -- who and where --

    @property
    def rank(self):
        """This process's global rank (torch.distributed's once initialised)."""
        return ranks.rank(self._environ)

    def resume_path(self):
        """The checkpoint to resume from (mlsup's newest complete one), or None for a fresh start."""
        return self.contract.resume_from or None

    # -- heartbeat --

    def heartbeat(self, step, compute=None):
        """Says `step` is done: writes "<step>" (with the current phases) into the heartbeat file, and the
        step's compute seconds: `compute` when given, else what `computing()` measured since the last beat."""
        measured = self.timer.take()
        self.heartbeat_writer.beat(step, measured if compute is None else compute)

    def computing(self):
        """Context manager around the rank's own work in a step (forward, backward): its seconds go into the
        next heartbeat as compute=, which tells a straggler; with time_ddp(), the wait for the others is left out."""
        return self.timer.computing()

    def time_ddp(self, model):
        """Registers a DDP communication hook on `model` that notes when this rank's gradients are ready (and
        averages them as DDP does, over the model's own process group), so that computing() ends there rather
        than after the others."""
        model.register_comm_hook(getattr(model, "process_group", None), timing.ddp_hook(self.timer))

    def saving(self):
        """Context manager: the heartbeat says `saving` while the block runs (mlsup's save timeout)."""
        return self.heartbeat_writer.saving()

    def waiting(self):
        """Context manager: the heartbeat says `waiting <n>` while the block is blocked on peers."""
        return self.heartbeat_writer.waiting()

    def phase(self, name):
        """Context manager: any other phase word after the step while the block runs."""
        return self.heartbeat_writer.phase(name)

    # -- decisions --

    def fenced(self):
        """Tells whether mlsup gave up on this attempt (this process's look at the fence file)."""
        fence = self.contract.fence_file
        return bool(fence) and os.path.exists(fence)

    def raised(self):
        """The flags this process sees now (rank 0 alone looks at the switches)."""
        c = self.contract
        looks = {
            "fenced": self.fenced,
            "kill": lambda: bool(c.kill_switch) and os.path.exists(c.kill_switch),
            "save": lambda: bool(c.save_switch) and os.path.exists(c.save_switch),
            "signal": lambda: self._signal.received is not None,
            "memory": lambda: bool(self.memory.exceeded()),
        }
        rank0 = self.rank == 0
        return {f.name for f in decide.FLAGS if (rank0 or not f.rank0_only) and looks[f.name]()}

    def check(self):
        """Takes a new decision, the same on every rank (one all-reduce: every rank must call it together)."""
        combined = self._reduce(decide.vector(self.raised(), self.rank))
        self.decision = decide.decide(combined)
        self._asked = set()
        if self.decision.reasons != self._told and self.rank == 0 and self.decision:
            say(f"{'save' if self.decision.save else 'no save'}, {'stop' if self.decision.stop else 'go on'}: "
                f"{', '.join(self.decision.reasons)}")
        self._told = self.decision.reasons
        return self.decision

    def _answer(self, question):
        if self.decision is None or question in self._asked:
            self.check()
        self._asked.add(question)
        return getattr(self.decision, question)

    def should_save(self):
        """Whether to save a checkpoint now (switches, the signal, memory), the same on every rank.

        Each decision answers one should_save() and one should_stop(); asking either again takes a new one.
        """
        return self._answer("save")

    def should_stop(self):
        """Whether to exit now, with code 0 (after the save should_save asked for), the same on every rank."""
        return self._answer("stop")

    @property
    def stop_reasons(self):
        """Why the current decision saves or stops: names from decide.FLAGS."""
        return self.decision.reasons if self.decision else ()

    def saved(self):
        """Tells the helper a checkpoint was saved by other means (a framework's own save): the save switch
        is done with. Called on every rank; rank 0 deletes the switch when the decision asked for it."""
        if self.rank == 0 and self.decision and "save" in self.decision.reasons and self.contract.save_switch:
            files.remove_if_exists(self.contract.save_switch)

    def no_retry(self):
        """Exits with the code that tells mlsup not to retry (a mistake another attempt cannot fix)."""
        sys.exit(self.contract.no_retry_exit_code)

    # -- checkpoints --

    @contextlib.contextmanager
    def checkpoint(self, step, all_ranks=False, folder=None):
        """Saves the checkpoint of `step` atomically; every rank enters it together.

        Yields a checkpoints.Save whose `dir` is the temporary folder to write into: on rank 0, or on
        every rank with all_ranks (sharded saves; one folder shared by all). On leaving, rank 0 writes the
        proof last and renames the folder into place, unless mlsup fenced the attempt meanwhile; then
        the save is dropped (`committed` stays False on every rank) and should_stop() says so next.
        """
        if not self.checkpoint_dir:
            raise ValueError("no checkpoint folder: MLSUP_CHECKPOINT_DIR is not set and none was given")
        save = checkpoints.Save(self.checkpoint_dir, step, self.layout, self.complete_marker,
                                writer=self.rank == 0, folder=folder, attempt=self.contract.attempt)
        with self.saving():
            save.prepare()
            self._reduce([0])  # every rank waits for the folder
            save.open(all_ranks)
            try:
                yield save
            except BaseException:
                save.discard()
                raise
            self._reduce([0])  # every rank has written its part
            self._finish(save)
            save.committed = bool(self._reduce([int(save.committed)])[0])

    def _finish(self, save):
        """Rank 0 puts the save in place, or drops it when the attempt is fenced."""
        if not save.writer:
            return
        if self.fenced():
            save.discard()
            say(f"attempt {self.contract.attempt} is fenced: the checkpoint of step {save.step} is dropped")
            return
        save.commit()
        self.saved()
