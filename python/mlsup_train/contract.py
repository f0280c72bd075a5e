"""What mlsup hands the training job: the MLSUP_* environment, read once into a Contract.

The table follows mlsup's own contract table (supervisor/render/contract.cpp and the README's
"contract with the training job" section); the SPANK plugin adds MLSUP_NODE and, when it gives each
task its own heartbeat file, MLSUP_ATTEMPT_HEARTBEAT_FILE.
"""

import dataclasses
import os
import socket

# Where mlsup marks an attempt it has given up on: <state_dir>/<FENCE_DIR>/<attempt>.
FENCE_DIR = "fenced"
DEFAULT_NO_RETRY_EXIT_CODE = 78


@dataclasses.dataclass(frozen=True)
class Contract:
    """The values of one attempt, as the job's environment gives them ("" when not set)."""

    run: str = ""
    attempt: int = 0
    state_dir: str = ""
    checkpoint_dir: str = ""
    resume_from: str = ""
    kill_switch: str = ""
    save_switch: str = ""
    heartbeat_file: str = ""
    exclude: str = ""
    no_retry_exit_code: int = DEFAULT_NO_RETRY_EXIT_CODE
    signal: str = ""
    signal_lead: int = 0
    node: str = ""
    attempt_heartbeat_file: str = ""
    stacks_signal: str = ""
    hang_dir: str = ""

    @property
    def supervised(self):
        """Tells whether the job runs under mlsup (it was handed a state folder)."""
        return bool(self.state_dir)

    @property
    def heartbeat_per_task(self):
        """Tells whether every task has a heartbeat file of its own (the SPANK plugin gave one)."""
        return bool(self.attempt_heartbeat_file) and self.attempt_heartbeat_file != self.heartbeat_file

    @property
    def pre_timeout_signal(self):
        """The signal Slurm sends before the time limit (MLSUP_SIGNAL, "USR2" -> signal.SIGUSR2); SIGUSR1 when not given."""
        import signal as signals

        return getattr(signals, "SIG" + self.signal, None) if self.signal else signals.SIGUSR1

    @property
    def fence_file(self):
        """The file whose existence says mlsup gave up on this attempt ("" outside mlsup)."""
        if not self.state_dir or not self.attempt:
            return ""
        return os.path.join(self.state_dir, FENCE_DIR, str(self.attempt))


def node_of(c, environ):
    """The Slurm node this process runs on: slurmstepd's SLURMD_NODENAME, else the plugin's MLSUP_NODE,
    else the host's name."""
    return environ.get("SLURMD_NODENAME") or c.node or socket.gethostname()


def file_name(node):
    """A node's name as a file name, as the SPANK plugin writes it: letters, digits, '.', '_' and '-'
    kept, anything else '_'; an empty name or one starting with '.' gets a leading '_'."""
    name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in node)
    return "_" + name if not name or name.startswith(".") else name


def rank_heartbeat_file(c, rank, node):
    """The heartbeat file a rank writes: the plugin's per-task one where it gave one; else, beside
    mlsup's P, P.d/<node>.<rank> as the plugin names them, so that mlsup reads each rank (a node
    whose ranks stopped first, a straggler) without the plugin too; "" when mlsup gave none."""
    if not c.heartbeat_file or c.heartbeat_per_task:
        return c.heartbeat_file
    return f"{c.heartbeat_file}.d/{file_name(node)}.{rank}"


# (field, environment variable, parser): every value the helper reads from the environment.
_ENVIRONMENT = (
    ("run", "MLSUP_RUN", str),
    ("attempt", "MLSUP_ATTEMPT", int),
    ("state_dir", "MLSUP_STATE_DIR", str),
    ("checkpoint_dir", "MLSUP_CHECKPOINT_DIR", str),
    ("resume_from", "MLSUP_RESUME_FROM", str),
    ("kill_switch", "MLSUP_KILL_SWITCH", str),
    ("save_switch", "MLSUP_SAVE_SWITCH", str),
    ("heartbeat_file", "MLSUP_HEARTBEAT_FILE", str),
    ("exclude", "MLSUP_EXCLUDE", str),
    ("no_retry_exit_code", "MLSUP_NO_RETRY_EXIT_CODE", int),
    ("signal", "MLSUP_SIGNAL", str),
    ("signal_lead", "MLSUP_SIGNAL_LEAD", int),
    ("node", "MLSUP_NODE", str),
    ("attempt_heartbeat_file", "MLSUP_ATTEMPT_HEARTBEAT_FILE", str),
    ("stacks_signal", "MLSUP_STACKS_SIGNAL", str),
    ("hang_dir", "MLSUP_HANG_DIR", str),
)


def from_environment(environ=None):
    """Reads the Contract from `environ` (default os.environ); a malformed number is a ValueError naming it."""
    environ = os.environ if environ is None else environ
    values = {}
    for field, name, parse in _ENVIRONMENT:
        text = environ.get(name, "")
        if parse is int:
            text = text.strip()
        if not text:
            continue
        try:
            values[field] = parse(text)
        except ValueError:
            raise ValueError(f"{name}={text!r} is not an integer") from None
    return Contract(**values)
