"""The heartbeat file: "<step>", then the phases the training is in ("<step> saving", "<step> waiting 3").

mlsup reads the first word as the step and the words after it as phases: `saving` gives the save
timeout, `waiting <n>` (right after the step, or after `saving`) says "alive but blocked on peers, no
progress". mlsup sees life in a change of the file's content, so a waiting rank rewrites its line
with a growing count from a thread of its own while the main thread is blocked. Last, optionally,
`compute=<seconds>`: the rank's own compute in that step, outside the collectives it waited in
(what tells a straggler in synchronous training, where every rank steps at the same rate).
"""

import contextlib
import dataclasses
import os
import sys
import threading

from . import files


@dataclasses.dataclass(frozen=True)
class Phase:
    """How a phase shows in the file."""

    write_on_enter: bool = True   # entering it is news (the save timeout starts now)
    write_on_exit: bool = True    # leaving it is news (back to the step alone)
    keepalive: bool = False       # rewritten with a growing count while it lasts


# The phases mlsup knows; any other name is written as a word, on entering and on leaving.
PHASES = {
    "saving": Phase(),
    # Not written on entering (a short wait is no news) nor on leaving (that would read as progress).
    "waiting": Phase(write_on_enter=False, write_on_exit=False, keepalive=True),
}
_OTHER = Phase()


def render(step, phases, compute=None):
    """The file's line for `step`, the (name, beats) phases, innermost last, and the step's compute seconds."""
    words = [str(step)]
    for name, beats in phases:
        words.append(name)
        if PHASES.get(name, _OTHER).keepalive:
            words.append(str(beats))
    if compute is not None:
        words.append(f"compute={compute:.4f}")
    return " ".join(words) + "\n"


class Heartbeat:
    """Writes one heartbeat file atomically; phases are context managers that restore the one before."""

    def __init__(self, path, enabled=True, keepalive_seconds=1.0):
        self.path = path
        self.enabled = bool(path) and enabled
        self.keepalive_seconds = keepalive_seconds
        self.step = None
        self.compute = None  # the step's compute seconds, written after the phases; None: not measured
        self.writes = 0  # lines written, for tests and figures
        self._phases = []  # [name, beats], innermost last
        self._lock = threading.Lock()
        self._failing = False

    @property
    def line(self):
        """The line this heartbeat stands at now ("" before the first step)."""
        with self._lock:
            return "" if self.step is None else render(self.step, self._phases, self.compute)

    def beat(self, step, compute=None):
        """Records `step` (and its compute seconds, when measured) and writes it with the current phases."""
        with self._lock:
            self.step = int(step)
            self.compute = None if compute is None else max(0.0, float(compute))
            self._write()

    @contextlib.contextmanager
    def phase(self, name):
        """Puts `name` after the step while the block runs; restores the phases before it on leaving."""
        if not name or any(c.isspace() for c in name) or name[0].isdigit():
            raise ValueError(f"a phase is one word that does not start with a digit, not {name!r}")
        kind = PHASES.get(name, _OTHER)
        entry = [name, 0]
        with self._lock:
            self._phases.append(entry)
            if kind.write_on_enter:
                self._write()
        stop = threading.Event()
        thread = self._start_keepalive(entry, stop) if kind.keepalive else None
        try:
            yield self
        finally:
            stop.set()
            if thread:
                thread.join()
            with self._lock:
                self._phases = [p for p in self._phases if p is not entry]
                if kind.write_on_exit:
                    self._write()

    def saving(self):
        """The `saving` phase: mlsup gives the save timeout rather than the steady one."""
        return self.phase("saving")

    def waiting(self):
        """The `waiting` phase: alive but blocked on peers; rewritten every keepalive_seconds."""
        return self.phase("waiting")

    def _start_keepalive(self, entry, stop):
        thread = threading.Thread(target=self._keepalive, args=(entry, stop), name="mlsup-heartbeat", daemon=True)
        thread.start()
        return thread

    def _keepalive(self, entry, stop):
        while not stop.wait(self.keepalive_seconds):
            with self._lock:
                entry[1] += 1
                self._write()

    def _write(self):
        """Writes the current line (the lock is held); nothing before the first step.

        A failed write is told on stderr (once until one succeeds) and does not stop the training:
        mlsup sees the silence.
        """
        if not self.enabled or self.step is None:
            return
        try:
            try:
                files.write_atomic(self.path, render(self.step, self._phases, self.compute))
            except FileNotFoundError:
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                files.write_atomic(self.path, render(self.step, self._phases, self.compute))
        except OSError as e:
            if not self._failing:
                print(f"mlsup_train: heartbeat: cannot write {self.path}: {e}", file=sys.stderr, flush=True)
            self._failing = True
            return
        self._failing = False
        self.writes += 1
