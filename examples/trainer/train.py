#!/usr/bin/env python3
"""A small deterministic training job that follows mlsup's contract with the training job.

Each step sleeps for --step-seconds and extends a SHA-256 hash chain; the final chain depends only
on the nonce created at the fresh start and the number of steps, so any lost, repeated or
restarted-from-scratch work shows in the result. See README.md next to this file.
"""

import argparse
import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import signal
import sys
import time
import traceback

PROG = "mlsup-trainer"

# Provisional fencing convention: mlsup marks an abandoned attempt by creating
# $MLSUP_STATE_DIR/<FENCE_DIR_NAME>/<attempt>. Kept in this one constant so it can follow mlsup.
FENCE_DIR_NAME = "fenced"

COMPLETE_MARKER = "COMPLETE"
STATE_FILE = "state.json"
TRAINER_LOG = "trainer-log.jsonl"
DEFAULT_NO_RETRY_EXIT_CODE = 78
POLL_SECONDS = 0.02
# A rank blocked on its peers this long rewrites its heartbeat as "<last> waiting <n>", every so often.
KEEPALIVE_SECONDS = 1.0
# Names this process in temporary file names; unique also across hosts sharing a filesystem.
TMP_SUFFIX = f"{os.uname().nodename}.{os.getpid()}"
STATE_KEYS = ("step", "chain", "nonce", "run", "attempt_written")


def process_started_at():
    """Wall time this process was started (before the interpreter's own start-up), from /proc."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.time()


PROCESS_STARTED_AT = process_started_at()


# ---------------------------------------------------------------------------------------------
# The result chain


def chain_start(nonce):
    """Returns chain_0 = sha256(nonce) as lowercase hex."""
    return hashlib.sha256(nonce.encode("ascii")).hexdigest()


def chain_next(chain, step):
    """Returns chain_step = sha256(chain_{step-1} + ":" + str(step)) as lowercase hex."""
    return hashlib.sha256(f"{chain}:{step}".encode("ascii")).hexdigest()


def expected_chain(nonce, steps):
    """Returns the chain after `steps` steps of a run started with `nonce`."""
    chain = chain_start(nonce)
    for step in range(1, steps + 1):
        chain = chain_next(chain, step)
    return chain


# ---------------------------------------------------------------------------------------------
# Small file helpers


def fsync_dir(path):
    """Flushes a directory entry change (a rename or a new file) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path, text, durable):
    """Writes `text` into `path` in place, fsynced when `durable`."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        if durable:
            f.flush()
            os.fsync(f.fileno())


def write_atomic(path, text, durable=True):
    """Replaces `path` with `text` atomically: write a temporary file beside it, then rename."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{TMP_SUFFIX}.tmp")
    write_file(tmp, text, durable)
    os.replace(tmp, path)
    if durable:
        fsync_dir(directory)


def append_line(path, record):
    """Appends one JSON line to `path` with a single write (O_APPEND)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    data = (json.dumps(record, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def remove_if_exists(path):
    """Deletes a file; a missing file is not an error."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def say(message):
    """Prints one line on stdout, prefixed with the program name, flushed at once."""
    print(f"{PROG}: {message}", flush=True)


# ---------------------------------------------------------------------------------------------
# The pre-timeout signal


class PreTimeoutSignal:
    """Remembers that SIGUSR1 arrived; the training acts on it at the end of the current step."""

    received = False

    @classmethod
    def install(cls):
        """Installs the SIGUSR1 handler (first thing at startup, so no early signal kills the job)."""
        signal.signal(signal.SIGUSR1, cls.handle)

    @classmethod
    def handle(cls, signum, frame):
        """Signal handler: records the signal."""
        cls.received = True


# ---------------------------------------------------------------------------------------------
# Ending the process


class Stop(Exception):
    """Ends the training with an exit reason and an exit code."""

    def __init__(self, reason, code, message=""):
        super().__init__(message or reason)
        self.reason = reason
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------------------
# Configuration: command line and environment


def int_list(text):
    """Parses "1,2,3" into a list of ints ("" = empty list)."""
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")


def parse_args(argv):
    """Parses the command line."""
    p = argparse.ArgumentParser(prog="train.py", description="Deterministic test trainer for mlsup.")
    add = p.add_argument
    add("--steps", metavar="N", type=int, default=100, help="target step (default 100)")
    add("--step-seconds", metavar="S", type=float, default=0.1, help="sleep per step (default 0.1)")
    add("--ckpt-every", metavar="K", type=int, default=0, help="periodic checkpoint interval in steps; 0 = off")
    add("--layout", choices=sorted(LAYOUTS), default="glob", help="checkpoint layout (default glob)")
    add("--ckpt-dir", metavar="DIR", help="checkpoint directory (default $MLSUP_CHECKPOINT_DIR)")
    add("--result", metavar="FILE", help="result file (default $MLSUP_STATE_DIR/result.json or ./result.json)")
    add("--nonce", metavar="HEX", help="nonce of a fresh start (default: random); with --expected-result")
    add("--fail-at-step", metavar="N", type=int, default=0, help="exit 1 instead of executing step N")
    add("--fail-attempts", metavar="LIST", type=int_list, default=[],
        help='injected faults only in these attempts, e.g. "1,2" (default all)')
    add("--fault-ranks", metavar="LIST", type=int_list, default=[],
        help="injected faults only on these ranks (default all)")
    add("--no-retry-at-step", metavar="N", type=int, default=0,
        help="exit $MLSUP_NO_RETRY_EXIT_CODE instead of executing step N")
    add("--hang-at-step", metavar="N", type=int, default=0,
        help="stop before step N and never go on (a hang: the heartbeat stays at N-1)")
    add("--hang-attempts", metavar="LIST", type=int_list, default=[],
        help="the hang only in these attempts (default: those of --fail-attempts), so that one run "
             "can crash in one attempt and hang in another")
    add("--partial-save-at-step", metavar="N", type=int, default=0,
        help="after step N write an incomplete checkpoint and pointer, then exit 1")
    add("--torn-heartbeat-at-step", metavar="N", type=int, default=0,
        help="at step N write the heartbeat in place, as a careless writer does: truncate, pause, write")
    add("--torn-heartbeat-seconds", metavar="S", type=float, default=3.0,
        help="how long the heartbeat file stays empty at --torn-heartbeat-at-step (default 3)")
    add("--slow-save-seconds", metavar="S", type=float, default=0.0, help="extra sleep inside every checkpoint save")
    add("--eval-at-step", metavar="N", type=int, default=0,
        help='after step N, an evaluation pass of --eval-seconds with the heartbeat "<N> eval"')
    add("--eval-seconds", metavar="S", type=float, default=0.0, help="length of that evaluation pass (default 0)")
    add("--rendezvous-dir", metavar="DIR",
        help="shared directory of the multi-rank collective (default $MLSUP_STATE_DIR/collective)")
    add("--collective-timeout", metavar="S", type=float, default=0.0,
        help="seconds a rank waits for its peers before exiting 1; 0 = forever (default)")
    add("--expected-result", action="store_true",
        help="print the expected final chain for --nonce and --steps, and exit")
    args = p.parse_args(argv)
    if args.expected_result and not args.nonce:
        p.error("--expected-result needs --nonce")
    if args.nonce is not None and not is_hex(args.nonce):
        p.error("--nonce must be a non-empty lowercase hex string")
    if args.steps < 0 or args.ckpt_every < 0 or args.step_seconds < 0 or args.eval_seconds < 0:
        p.error("--steps, --ckpt-every, --step-seconds and --eval-seconds must not be negative")
    return args


def is_hex(text):
    """Tells whether `text` is a non-empty lowercase hex string."""
    return bool(text) and all(c in "0123456789abcdef" for c in text)


def env_int(name, default):
    """Reads an integer environment variable; unset or empty gives `default`."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise Stop("bad-environment", 1, f"{name}={value!r} is not an integer")


@dataclasses.dataclass
class Context:
    """Everything the job learns from its environment, resolved against the command line."""

    run: str
    attempt: int
    state_dir: str
    ckpt_dir: str
    resume_from: str
    kill_switch: str
    save_switch: str
    heartbeat_file: str
    no_retry_code: int
    rank: int
    world: int
    node: str
    job_id: str
    fault_dir: str
    result: str
    log_file: str
    rendezvous: str


def collective_key(attempt):
    """Names one launch of one attempt so attempts (and requeues) never share collective files."""
    job = os.environ.get("SLURM_JOB_ID", "") or "local"
    step = os.environ.get("SLURM_STEP_ID", "")
    restarts = os.environ.get("SLURM_RESTART_COUNT", "") or "0"
    job_part = f"job{job}.{step}" if step else f"job{job}"
    return f"attempt{attempt}-{job_part}-restart{restarts}"


def make_context(args):
    """Builds the Context from the environment and the command line."""
    env = os.environ.get
    state_dir = env("MLSUP_STATE_DIR", "")
    attempt = env_int("MLSUP_ATTEMPT", 1)
    result = args.result or os.path.join(state_dir or ".", "result.json")
    log_dir = state_dir or os.path.dirname(os.path.abspath(result))
    base = args.rendezvous_dir or os.path.join(log_dir, "collective")
    return Context(
        run=env("MLSUP_RUN", ""),
        attempt=attempt,
        state_dir=state_dir,
        ckpt_dir=args.ckpt_dir or env("MLSUP_CHECKPOINT_DIR", ""),
        resume_from=env("MLSUP_RESUME_FROM", ""),
        kill_switch=env("MLSUP_KILL_SWITCH", ""),
        save_switch=env("MLSUP_SAVE_SWITCH", ""),
        heartbeat_file=env("MLSUP_HEARTBEAT_FILE", ""),
        no_retry_code=env_int("MLSUP_NO_RETRY_EXIT_CODE", DEFAULT_NO_RETRY_EXIT_CODE),
        rank=env_int("SLURM_PROCID", 0),
        world=max(1, env_int("SLURM_NTASKS", 1)),
        node=env("SLURMD_NODENAME", ""),
        job_id=env("SLURM_JOB_ID", ""),
        fault_dir=env("MLSUP_FAULT_DIR", ""),
        result=result,
        log_file=os.path.join(log_dir, TRAINER_LOG),
        rendezvous=os.path.join(base, collective_key(attempt)),
    )


# ---------------------------------------------------------------------------------------------
# Checkpoint layouts


@dataclasses.dataclass(frozen=True)
class Layout:
    """How one framework names checkpoint folders and points at the newest one."""

    folder_format: str  # folder name for a step, str.format with `step`
    pointer_file: str  # file naming the newest checkpoint; "" = none
    pointer_format: str  # its content, str.format with `step`
    last_file: str = ""  # a file the framework writes into a checkpoint last; "" = none

    def folder(self, step):
        """Returns the folder name of the checkpoint of `step`."""
        return self.folder_format.format(step=step)

    def update_pointer(self, ckpt_dir, step, durable=True):
        """Points the layout's pointer file (if any) at the checkpoint of `step`, atomically."""
        if self.pointer_file:
            write_atomic(os.path.join(ckpt_dir, self.pointer_file), self.pointer_format.format(step=step), durable)


LAYOUTS = {
    "megatron": Layout("iter_{step:07d}", "latest_checkpointed_iteration.txt", "{step}"),
    "deepspeed": Layout("global_step{step}", "latest", "global_step{step}"),
    "hf": Layout("checkpoint-{step}", "", "", "trainer_state.json"),
    "glob": Layout("step_{step}", "", ""),
}


# ---------------------------------------------------------------------------------------------
# Training state and checkpoints


def fresh_state(ctx, nonce):
    """Returns the state of a run that starts from scratch."""
    return {"step": 0, "chain": chain_start(nonce), "nonce": nonce, "run": ctx.run,
            "attempt_written": 0, "attempts_seen": []}


def load_checkpoint(path, run):
    """Loads and verifies a complete checkpoint; raises Stop("bad-resume") when it is not one."""
    def refuse(why):
        raise Stop("bad-resume", 1, f"refusing to resume from {path}: {why}")

    if not os.path.isdir(path):
        refuse("no such checkpoint folder")
    if not os.path.isfile(os.path.join(path, COMPLETE_MARKER)):
        refuse(f"not a complete checkpoint (no {COMPLETE_MARKER} marker)")
    try:
        with open(os.path.join(path, STATE_FILE), encoding="utf-8") as f:
            state = json.load(f)
    except (OSError, ValueError) as e:
        refuse(f"unreadable {STATE_FILE}: {e}")
    if not isinstance(state, dict) or any(k not in state for k in STATE_KEYS):
        refuse(f"{STATE_FILE} lacks one of {', '.join(STATE_KEYS)}")
    if not isinstance(state["step"], int) or state["step"] < 0 or not is_hex(str(state["nonce"])):
        refuse(f"{STATE_FILE} has a bad step or nonce")
    if expected_chain(state["nonce"], state["step"]) != state["chain"]:
        refuse(f"the chain in {STATE_FILE} does not match its nonce and step")
    if run and state["run"] and state["run"] != run:
        refuse(f"it belongs to run {state['run']!r}, this is run {run!r}")
    state.setdefault("attempts_seen", [])
    return state


def replace_dir(tmp, final):
    """Renames folder `tmp` to `final`, replacing an existing `final` (an older partial one)."""
    if os.path.lexists(final):
        old = os.path.join(os.path.dirname(final), f".{os.path.basename(final)}.{TMP_SUFFIX}.old")
        os.rename(final, old)
        os.rename(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, final)


def save_checkpoint(ctx, layout, state, slow_seconds, check_fenced):
    """Writes the checkpoint of state["step"] atomically: temporary folder, fsync, rename, pointer."""
    check_fenced()
    os.makedirs(ctx.ckpt_dir, exist_ok=True)
    name = layout.folder(state["step"])
    final = os.path.join(ctx.ckpt_dir, name)
    # Hidden and ending in letters, so neither a glob nor a trailing-digits step regex matches it.
    tmp = os.path.join(ctx.ckpt_dir, f".{name}.{TMP_SUFFIX}.saving")
    try:
        os.makedirs(tmp)
        write_file(os.path.join(tmp, STATE_FILE), json.dumps(state, sort_keys=True, indent=1) + "\n", durable=True)
        if slow_seconds > 0:
            time.sleep(slow_seconds)
        write_file(os.path.join(tmp, COMPLETE_MARKER), f"{state['step']}\n", durable=True)
        if layout.last_file:
            write_file(os.path.join(tmp, layout.last_file), json.dumps({"global_step": state["step"]}) + "\n", durable=True)
        fsync_dir(tmp)
        check_fenced()
        replace_dir(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fsync_dir(ctx.ckpt_dir)
    layout.update_pointer(ctx.ckpt_dir, state["step"])
    return final


def save_partial(ctx, layout, state):
    """Leaves what a crash in the middle of a save leaves: folder and pointer, truncated state, no marker."""
    os.makedirs(ctx.ckpt_dir, exist_ok=True)
    final = os.path.join(ctx.ckpt_dir, layout.folder(state["step"]))
    shutil.rmtree(final, ignore_errors=True)
    os.makedirs(final)
    text = json.dumps(state, sort_keys=True)
    write_file(os.path.join(final, STATE_FILE), text[: len(text) // 2], durable=True)
    layout.update_pointer(ctx.ckpt_dir, state["step"])
    return final


# ---------------------------------------------------------------------------------------------
# The collective: ranks coupled like an all-reduce, through files in a shared directory


class Collective:
    """A blocking exchange among all ranks of one launch: each rank posts a record, then waits for all.

    Like an NCCL all-reduce, a dead or frozen peer makes the others block (forever by default).
    """

    def __init__(self, ctx, timeout, check_fenced, keepalive=None):
        self.rank = ctx.rank
        self.keepalive = keepalive
        self.world = ctx.world
        self.dir = ctx.rendezvous
        self.timeout = timeout
        self.check_fenced = check_fenced
        self.previous = None  # this rank's file of the previous exchange
        if self.world > 1:
            os.makedirs(self.dir, exist_ok=True)

    @staticmethod
    def name(tag, rank):
        """The name of the file in which `rank` posts its record for exchange `tag`."""
        return f"{tag}.rank{rank}"

    def path(self, tag, rank):
        """Returns the file in which `rank` posts its record for exchange `tag`."""
        return os.path.join(self.dir, self.name(tag, rank))

    def exchange(self, tag, record):
        """Posts `record` for `tag` and returns every rank's record, indexed by rank."""
        if self.world == 1:
            return [record]
        write_atomic(self.path(tag, self.rank), json.dumps(record), durable=False)
        records = self.wait_for_peers(tag, record)
        # Every peer posted `tag` after finishing the previous exchange, so its file is no longer read.
        if self.previous:
            remove_if_exists(self.previous)
        self.previous = self.path(tag, self.rank)
        return records

    def wait_for_peers(self, tag, own):
        """Polls until every rank posted `tag`; checks fencing and the optional timeout meanwhile."""
        records = [None] * self.world
        records[self.rank] = own
        pending = [r for r in range(self.world) if r != self.rank]
        started = time.monotonic()
        deadline = started + self.timeout if self.timeout > 0 else None
        beats = 0
        while True:
            posted = self.posted()
            pending = [r for r in pending if not (self.name(tag, r) in posted and self.try_read(tag, r, records))]
            if not pending:
                return records
            self.check_fenced()
            if self.keepalive and time.monotonic() - started >= KEEPALIVE_SECONDS * (beats + 1):
                beats += 1
                self.keepalive(beats)
            if deadline is not None and time.monotonic() > deadline:
                raise Stop("collective-timeout", 1, f"ranks {pending} did not reach {tag} in {self.timeout:g}s")
            time.sleep(POLL_SECONDS)

    def posted(self):
        """The names of the records posted so far: one listing per poll, not one open per missing
        peer (at 64 ranks the failed opens alone kept two cores busy)."""
        try:
            return set(os.listdir(self.dir))
        except FileNotFoundError:
            return set()

    def try_read(self, tag, rank, records):
        """Reads `rank`'s record for `tag` into `records`; tells whether it was there."""
        try:
            with open(self.path(tag, rank), encoding="utf-8") as f:
                records[rank] = json.load(f)
            return True
        except (FileNotFoundError, ValueError):
            return False


# ---------------------------------------------------------------------------------------------
# The trainer


class Trainer:
    """Runs the steps of one rank of one attempt and keeps the record of what it did."""

    def __init__(self, args, ctx):
        self.args = args
        self.ctx = ctx
        self.layout = LAYOUTS[args.layout]
        self.state = None
        self.start_step = None
        self.executed = 0
        self.first_step_at = None  # wall time of this process's first step (its start-up cost ends there)
        self.last_heartbeat = ""
        self.collective = Collective(ctx, args.collective_timeout, self.check_fenced, self.keepalive)

    # -- configuration, fencing, switches, faults --

    def check_config(self):
        """Gives up (do-not-retry exit code) when periodic checkpoints are asked for without a directory."""
        a = self.args
        if (a.ckpt_every > 0 or a.partial_save_at_step > 0) and not self.ctx.ckpt_dir:
            raise Stop("bad-config", self.ctx.no_retry_code,
                       "--ckpt-every/--partial-save-at-step need --ckpt-dir or $MLSUP_CHECKPOINT_DIR")

    def fence_file(self):
        """Returns the file whose existence fences this attempt ("" without a state dir)."""
        if not self.ctx.state_dir:
            return ""
        return os.path.join(self.ctx.state_dir, FENCE_DIR_NAME, str(self.ctx.attempt))

    def check_fenced(self):
        """Stops (exit 0, reason "fenced") when mlsup has fenced this attempt."""
        fence = self.fence_file()
        if fence and os.path.exists(fence):
            raise Stop("fenced", 0, f"attempt {self.ctx.attempt} is fenced ({fence}); stopping without a checkpoint")

    def fault_applies(self, attempts=None):
        """Tells whether injected faults apply to this attempt (of `attempts`, default
        --fail-attempts; empty means all) and rank."""
        a = self.args
        attempts = attempts or a.fail_attempts
        return ((not attempts or self.ctx.attempt in attempts)
                and (not a.fault_ranks or self.ctx.rank in a.fault_ranks))

    def inject_faults(self, step):
        """Crashes, gives up or hangs before `step` when the command line asks for it."""
        if step == self.args.hang_at_step and self.fault_applies(self.args.hang_attempts):
            say(f"injected hang before step {step}")
            while True:
                time.sleep(3600)
        if not self.fault_applies():
            return
        if step == self.args.fail_at_step:
            raise Stop("crash", 1, f"injected crash at step {step}")
        if step == self.args.no_retry_at_step:
            raise Stop("no-retry", self.ctx.no_retry_code, f"injected do-not-retry at step {step}")

    def check_sticky_bad_node(self):
        """Crashes at startup on a node marked $MLSUP_FAULT_DIR/sticky-bad/<node>."""
        ctx = self.ctx
        if ctx.fault_dir and ctx.node and os.path.exists(os.path.join(ctx.fault_dir, "sticky-bad", ctx.node)):
            raise Stop("sticky-bad-node", 1, f"node {ctx.node} is marked sticky-bad")

    def local_flags(self):
        """Returns this rank's flags for the step exchange: switches (rank 0) and the signal."""
        flags = []
        if self.ctx.rank == 0:
            if self.ctx.kill_switch and os.path.exists(self.ctx.kill_switch):
                flags.append("kill")
            if self.ctx.save_switch and os.path.exists(self.ctx.save_switch):
                flags.append("save")
        if PreTimeoutSignal.received:
            flags.append("signal")
        return flags

    # -- heartbeat, state --

    def torn_heartbeat(self, text):
        """Writes the heartbeat in place (truncate, pause, write): a reader sees an empty file meanwhile."""
        if not self.ctx.heartbeat_file:
            return
        with open(self.ctx.heartbeat_file, "w") as f:
            f.flush()
            say(f"heartbeat truncated at step {text}; writing it in {self.args.torn_heartbeat_seconds}s")
            time.sleep(self.args.torn_heartbeat_seconds)
            f.write(f"{text}\n")

    def heartbeat(self, text):
        """Writes the heartbeat ("<step>" or "<step> saving") atomically, when a path is given."""
        if self.ctx.heartbeat_file:
            write_atomic(self.ctx.heartbeat_file, f"{text}\n", durable=False)
        self.last_heartbeat = text

    def keepalive(self, n):
        """While blocked on peers: "<last heartbeat> waiting <n>" says alive, not progressing."""
        if self.ctx.heartbeat_file and self.last_heartbeat:
            write_atomic(self.ctx.heartbeat_file, f"{self.last_heartbeat} waiting {n}\n", durable=False)

    def initial_state(self):
        """Loads the resume checkpoint, or creates the state of a fresh start."""
        if self.ctx.resume_from:
            return load_checkpoint(self.ctx.resume_from, self.ctx.run)
        return fresh_state(self.ctx, self.args.nonce or secrets.token_hex(8))

    def agree_on_state(self, state):
        """Makes every rank start from rank 0's state (its nonce on a fresh start)."""
        records = self.collective.exchange("init", {"state": state})
        return records[0]["state"]

    # -- checkpoints --

    def checkpoint(self, delete_save_switch):
        """Saves a checkpoint of the current step (rank 0 writes; every rank waits for the save)."""
        step = self.state["step"]
        self.heartbeat(f"{step} saving")
        self.check_fenced()
        if self.ctx.rank == 0:
            self.write_checkpoint()
            if delete_save_switch:
                remove_if_exists(self.ctx.save_switch)
        self.collective.exchange(f"saved-{step}", {})
        self.heartbeat(str(step))

    def write_checkpoint(self):
        """Rank 0's part of a save; without a checkpoint directory it says so and skips the save."""
        if not self.ctx.ckpt_dir:
            say("no checkpoint directory (--ckpt-dir or $MLSUP_CHECKPOINT_DIR): not saving")
            return
        state = dict(self.state, run=self.ctx.run, attempt_written=self.ctx.attempt)
        try:
            path = save_checkpoint(self.ctx, self.layout, state, self.args.slow_save_seconds, self.check_fenced)
        except OSError as e:
            raise Stop("save-failed", 1, f"checkpoint of step {state['step']} failed: {e}")
        say(f"saved checkpoint {path}")

    def partial_save(self):
        """Simulates a crash in the middle of a save (rank 0 leaves the debris), exit 1."""
        if self.ctx.rank == 0:
            path = save_partial(self.ctx, self.layout, self.state)
            say(f"left an incomplete checkpoint {path}")
        raise Stop("partial-save", 1, f"injected crash in the middle of the save of step {self.state['step']}")

    # -- the loop --

    def run(self):
        """Trains from the initial state to the target step; always ends by raising Stop."""
        self.check_config()
        self.check_fenced()
        state = self.initial_state()
        self.start_step = state["step"]
        self.heartbeat(str(state["step"]))
        self.check_sticky_bad_node()
        self.state = self.agree_on_state(state)
        self.start_step = self.state["step"]
        if self.ctx.attempt not in self.state["attempts_seen"]:
            self.state["attempts_seen"] = self.state["attempts_seen"] + [self.ctx.attempt]
        self.announce()
        for step in range(self.state["step"] + 1, self.args.steps + 1):
            self.step(step)
        self.finish()

    def announce(self):
        """Prints how this rank starts: fresh (with the nonce) or resumed."""
        ctx, state = self.ctx, self.state
        say(f"run={ctx.run or '-'} attempt={ctx.attempt} rank={ctx.rank}/{ctx.world} node={ctx.node or '-'} "
            f"start_step={state['step']} target={self.args.steps}")
        if ctx.resume_from:
            say(f"resumed from {ctx.resume_from} at step {state['step']}")
        else:
            say(f"nonce={state['nonce']}")

    def step(self, step):
        """Executes one step, then acts on the decision all ranks share."""
        self.check_fenced()
        self.inject_faults(step)
        time.sleep(self.args.step_seconds)
        self.state["chain"] = chain_next(self.state["chain"], step)
        self.state["step"] = step
        self.executed += 1
        self.first_step_at = self.first_step_at or time.time()
        if step == self.args.torn_heartbeat_at_step and self.fault_applies():
            self.torn_heartbeat(str(step))
        self.heartbeat(str(step))
        if step == self.args.partial_save_at_step and self.fault_applies():
            self.partial_save()
        if step == self.args.eval_at_step:
            self.evaluate(step)
        records = self.collective.exchange(f"step-{step}", {"flags": self.local_flags()})
        kill = "kill" in records[0]["flags"]
        save = "save" in records[0]["flags"]
        signalled = any("signal" in r["flags"] for r in records)
        periodic = self.args.ckpt_every > 0 and step % self.args.ckpt_every == 0
        if kill or save or signalled or periodic:
            self.checkpoint(delete_save_switch=save)
        if step == self.args.steps:
            return
        if kill:
            raise Stop("kill-switch", 0, f"kill switch at step {step}")
        if signalled:
            raise Stop("signal", 0, f"pre-timeout signal at step {step}")

    def evaluate(self, step):
        """Long work that is not a step, marked as the phase "eval" in the heartbeat."""
        self.heartbeat(f"{step} eval")
        time.sleep(self.args.eval_seconds)
        self.heartbeat(str(step))

    def finish(self):
        """Writes the result (rank 0) at the target step and ends with reason "done"."""
        if self.ctx.rank == 0:
            self.check_fenced()
            state = self.state
            result = {"run": self.ctx.run, "nonce": state["nonce"], "steps": state["step"],
                      "chain": state["chain"], "attempts_seen": state["attempts_seen"]}
            write_atomic(self.ctx.result, json.dumps(result, sort_keys=True, indent=1) + "\n")
            say(f"done: steps={state['step']} chain={state['chain']} result={self.ctx.result}")
        raise Stop("done", 0)

    def log_record(self, stop):
        """Returns the trainer-log line of this process."""
        state = self.state or {}
        start = self.start_step if self.start_step is not None else 0
        return {"run": self.ctx.run, "campaign_id": os.environ.get("MLSUP_CAMPAIGN_ID", ""),
                "attempt": self.ctx.attempt, "rank": self.ctx.rank, "node": self.ctx.node,
                "job_id": self.ctx.job_id, "resumed_from": self.ctx.resume_from, "start_step": start,
                "end_step": state.get("step", start), "steps_executed": self.executed,
                "exit_reason": stop.reason, "exit_code": stop.code,
                "process_started_at": PROCESS_STARTED_AT, "first_step_at": self.first_step_at,
                "nonce": state.get("nonce", ""), "chain": state.get("chain", ""),
                "debug_env": {n: os.environ.get(n, "") for n in os.environ.get("MLSUP_DEBUG_ENV", "").split()}}

    def append_log(self, stop):
        """Appends this process's line to the trainer log; a failure to do so is only reported."""
        try:
            append_line(self.ctx.log_file, self.log_record(stop))
        except OSError as e:
            print(f"{PROG}: cannot append to {self.ctx.log_file}: {e}", file=sys.stderr, flush=True)


def train(args):
    """Runs the training mode and returns the process exit code."""
    trainer = None
    try:
        ctx = make_context(args)
        trainer = Trainer(args, ctx)
        trainer.run()
        raise Stop("done", 0)  # not reached: run() always raises
    except Stop as stop:
        if stop.message:
            stream = sys.stdout if stop.code == 0 else sys.stderr
            print(f"{PROG}: {stop.message}", file=stream, flush=True)
        if trainer is not None:
            trainer.append_log(stop)
        return stop.code
    except Exception:
        traceback.print_exc()
        if trainer is not None:
            trainer.append_log(Stop("error", 1))
        return 1


def main(argv=None):
    """Entry point: --expected-result prints a chain; otherwise trains."""
    PreTimeoutSignal.install()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.expected_result:
        print(expected_chain(args.nonce, args.steps))
        return 0
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
