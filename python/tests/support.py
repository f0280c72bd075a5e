"""What the helper's tests share: a contract environment in a temporary folder, and a fake all-reduce."""

import os
import sys
import tempfile
import threading
import time

# The package from this checkout, ahead of any installed copy.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def eventually(predicate, seconds=10):
    """Whether predicate() comes true within `seconds` (a loaded machine may be slow)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


class Campaign:
    """A temporary state folder and the MLSUP_* environment mlsup would hand attempt `attempt`."""

    def __init__(self, attempt=1, per_task=False):
        self._tmp = tempfile.TemporaryDirectory(prefix="mlsup-train-test-")
        self.root = self._tmp.name
        self.state_dir = os.path.join(self.root, "state")
        self.checkpoint_dir = os.path.join(self.root, "checkpoints")
        self.attempt = attempt
        os.makedirs(os.path.join(self.state_dir, "heartbeats"))
        heartbeat = os.path.join(self.state_dir, "heartbeats", f"attempt-{attempt}")
        self.env = {
            "MLSUP_RUN": "test", "MLSUP_ATTEMPT": str(attempt), "MLSUP_STATE_DIR": self.state_dir,
            "MLSUP_CHECKPOINT_DIR": self.checkpoint_dir, "MLSUP_RESUME_FROM": "",
            "MLSUP_KILL_SWITCH": os.path.join(self.state_dir, "kill-switch"),
            "MLSUP_SAVE_SWITCH": os.path.join(self.state_dir, "save-switch"),
            "MLSUP_HEARTBEAT_FILE": heartbeat, "MLSUP_EXCLUDE": "", "MLSUP_NO_RETRY_EXIT_CODE": "78",
            "SLURMD_NODENAME": "n1",
        }
        if per_task:
            os.makedirs(heartbeat + ".d")
            self.env["MLSUP_ATTEMPT_HEARTBEAT_FILE"] = heartbeat

    def rank_env(self, rank, node="n1"):
        """The environment of `rank` (with the plugin's per-task heartbeat when the campaign has it)."""
        env = dict(self.env, RANK=str(rank), SLURMD_NODENAME=node)
        if "MLSUP_ATTEMPT_HEARTBEAT_FILE" in env:
            env["MLSUP_HEARTBEAT_FILE"] = f"{env['MLSUP_ATTEMPT_HEARTBEAT_FILE']}.d/{node}.{rank}"
        return env

    def beat_file(self, rank=0, node="n1"):
        """The heartbeat file `rank` on `node` writes: P.d/<node>.<rank>, with the plugin or without it."""
        return f"{self.env['MLSUP_HEARTBEAT_FILE']}.d/{node}.{rank}"

    def touch(self, name):
        """Creates a file (a switch) by its environment name, or a path under the state folder."""
        path = self.env.get(name) or os.path.join(self.state_dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w"):
            pass
        return path

    def fence(self):
        """What mlsup does when it gives up on the attempt."""
        return self.touch(os.path.join("fenced", str(self.attempt)))

    def cleanup(self):
        self._tmp.cleanup()


class FakeWorld:
    """An all-reduce (element-wise max) among `size` threads, each playing one rank."""

    def __init__(self, size):
        self.size = size
        self._barrier = threading.Barrier(size, timeout=30)
        self._lock = threading.Lock()
        self._slots = {}
        self.calls = 0

    def reducer(self, rank):
        """The reduce function of `rank`."""
        def reduce(values):
            with self._lock:
                self._slots[rank] = list(values)
                self.calls += 1
            self._barrier.wait()
            with self._lock:
                lists = [self._slots[r] for r in range(self.size)]
            result = [max(column) for column in zip(*lists)]
            self._barrier.wait()  # nobody posts the next round before everyone read this one
            return result
        return reduce

    def run(self, body):
        """Runs body(rank) on every rank at once; returns the results by rank (an exception is raised again)."""
        results, errors = [None] * self.size, []

        def one(rank):
            try:
                results[rank] = body(rank)
            except BaseException as e:  # re-raised below
                errors.append(e)
                self._barrier.abort()

        threads = [threading.Thread(target=one, args=(r,)) for r in range(self.size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results
