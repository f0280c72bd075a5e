#!/usr/bin/env python3
"""Self-test of examples/trainer/train.py: runs it as subprocesses in a temporary directory, no Slurm.

Usage: python3 tests/integration/trainer_selftest.py [-v] [TestCase.test_name ...]
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "examples", "trainer", "train.py")
RUN_TIMEOUT = 30  # seconds any single trainer process may take
WAIT_TIMEOUT = 10  # seconds a wait for a heartbeat or file may take

LAYOUT_FOLDERS = {"megatron": "iter_{:07d}", "deepspeed": "global_step{}", "hf": "checkpoint-{}", "glob": "step_{}"}


def reference_chain(nonce, steps):
    """Computes the result chain as README.md defines it, independently of train.py."""
    chain = hashlib.sha256(nonce.encode()).hexdigest()
    for step in range(1, steps + 1):
        chain = hashlib.sha256(f"{chain}:{step}".encode()).hexdigest()
    return chain


def read_text(path):
    """Returns a file's content, or None when it does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def read_json(path):
    """Returns a JSON file's content."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Trainer:
    """One train.py process started by a test, with its output captured in files."""

    def __init__(self, test, args, env, name):
        self.out_path = os.path.join(test.tmp, f"{name}.out")
        self.err_path = os.path.join(test.tmp, f"{name}.err")
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen([sys.executable, TRAIN] + [str(a) for a in args],
                                         env=env, stdout=out, stderr=err, cwd=test.tmp)
        self.heartbeat_file = env.get("MLSUP_HEARTBEAT_FILE", "")

    def wait(self, timeout=RUN_TIMEOUT):
        """Waits for the process to end and returns its exit code (fails the test on timeout)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"trainer did not end within {timeout}s; stderr: {self.stderr()}")

    def stdout(self):
        """Returns what the process printed on stdout."""
        return read_text(self.out_path) or ""

    def stderr(self):
        """Returns what the process printed on stderr."""
        return read_text(self.err_path) or ""

    def heartbeat(self):
        """Returns the heartbeat's step, or -1 when none was written yet."""
        text = read_text(self.heartbeat_file)
        return int(text.split()[0]) if text and text.split() else -1

    def nonce(self):
        """Returns the nonce the process logged on stdout."""
        for line in self.stdout().splitlines():
            if line.startswith("mlsup-trainer: nonce="):
                return line.split("=", 1)[1].strip()
        raise AssertionError(f"no nonce line in stdout: {self.stdout()}")

    def stop(self):
        """Ends the process if it still runs (also when it is stopped)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(5)


class TrainerSelfTest(unittest.TestCase):
    """Checks that train.py follows the training-job contract."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mlsup-trainer-test-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.state = os.path.join(self.tmp, "state")
        self.ckpt = os.path.join(self.tmp, "ckpt")
        self.kill_switch = os.path.join(self.tmp, "kill-switch")
        self.save_switch = os.path.join(self.tmp, "save-switch")
        self.count = 0

    # -- helpers --

    def env(self, attempt=1, rank=None, world=None, **extra):
        """Returns the job environment of `attempt` (and of one rank when `rank` is given)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MLSUP_", "SLURM"))}
        hb_name = f"attempt-{attempt}" if rank is None else f"attempt-{attempt}.rank{rank}"
        env.update(MLSUP_RUN="selftest", MLSUP_ATTEMPT=str(attempt), MLSUP_STATE_DIR=self.state,
                   MLSUP_CHECKPOINT_DIR=self.ckpt, MLSUP_RESUME_FROM="",
                   MLSUP_KILL_SWITCH=self.kill_switch, MLSUP_SAVE_SWITCH=self.save_switch,
                   MLSUP_HEARTBEAT_FILE=os.path.join(self.state, "heartbeats", hb_name))
        if rank is not None:
            env.update(SLURM_PROCID=str(rank), SLURM_NTASKS=str(world), SLURMD_NODENAME=f"n{rank + 1}",
                       SLURM_JOB_ID="4242")
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def start(self, args, env):
        """Starts train.py and registers it for cleanup."""
        self.count += 1
        trainer = Trainer(self, args, env, f"trainer{self.count}")
        self.addCleanup(trainer.stop)
        return trainer

    def run_trainer(self, args, env, expect_rc=0):
        """Runs train.py to its end and checks its exit code."""
        trainer = self.start(args, env)
        rc = trainer.wait()
        self.assertEqual(rc, expect_rc, f"exit code; stdout: {trainer.stdout()} stderr: {trainer.stderr()}")
        return trainer

    def wait_for(self, what, predicate, timeout=WAIT_TIMEOUT):
        """Polls `predicate` until it is true; fails the test after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                self.fail(f"timed out after {timeout}s waiting for {what}")
            time.sleep(0.01)

    def assert_hangs_before(self, t, step):
        """Checks that trainer `t` hangs before `step`: it says so, lives on, its heartbeat stays at
        the step before; then stops it."""
        self.wait_for("the injected hang", lambda: f"injected hang before step {step}" in t.stdout())
        time.sleep(1)
        self.assertIsNone(t.proc.poll())
        self.assertEqual(read_text(t.heartbeat_file), f"{step - 1}\n")
        t.stop()

    def expected(self, nonce, steps):
        """Returns train.py --expected-result, checked against the reference definition."""
        out = subprocess.run([sys.executable, TRAIN, "--expected-result", "--nonce", nonce, "--steps", str(steps)],
                             capture_output=True, text=True, timeout=RUN_TIMEOUT, check=True).stdout.strip()
        self.assertEqual(out, reference_chain(nonce, steps))
        return out

    def result(self):
        """Returns the result file of the campaign."""
        return read_json(os.path.join(self.state, "result.json"))

    def log(self):
        """Returns the trainer-log lines written so far."""
        path = os.path.join(self.state, "trainer-log.jsonl")
        return [json.loads(line) for line in (read_text(path) or "").splitlines()]

    def checkpoints(self):
        """Returns the names of the visible entries of the checkpoint directory."""
        if not os.path.isdir(self.ckpt):
            return []
        return sorted(e for e in os.listdir(self.ckpt) if not e.startswith("."))

    def complete_steps(self):
        """Returns the steps of the complete step_<N> checkpoints, ascending."""
        steps = []
        for name in self.checkpoints():
            if name.startswith("step_") and os.path.exists(os.path.join(self.ckpt, name, "COMPLETE")):
                steps.append(int(name[len("step_"):]))
        return sorted(steps)

    def assert_complete(self, folder, step):
        """Checks that `folder` is a complete checkpoint of `step`."""
        self.assertTrue(os.path.isfile(os.path.join(folder, "COMPLETE")), folder)
        state = read_json(os.path.join(folder, "state.json"))
        self.assertEqual(state["step"], step)
        self.assertEqual(state["chain"], reference_chain(state["nonce"], step))
        for key in ("run", "attempt_written"):
            self.assertIn(key, state)

    # -- tests --

    def test_fresh_run_completes_with_expected_chain(self):
        """A fresh run reaches the target; its chain is the one --expected-result gives."""
        t = self.run_trainer(["--steps", 40, "--step-seconds", 0.002], self.env())
        result = self.result()
        self.assertEqual(result["nonce"], t.nonce())
        self.assertEqual(len(result["nonce"]), 16)
        self.assertEqual(result["steps"], 40)
        self.assertEqual(result["chain"], self.expected(t.nonce(), 40))
        self.assertEqual(result["attempts_seen"], [1])
        self.assertEqual(result["run"], "selftest")
        (line,) = self.log()
        self.assertEqual((line["exit_reason"], line["start_step"], line["end_step"], line["steps_executed"]),
                         ("done", 0, 40, 40))
        self.assertEqual(line["resumed_from"], "")
        self.assertEqual(t.heartbeat(), 40)
        self.assertEqual(self.checkpoints(), [])

    def test_crash_then_resume_gives_same_chain(self):
        """A crash at step 30 and a resume from the newest checkpoint give the fresh run's chain."""
        args = ["--steps", 60, "--step-seconds", 0.002, "--ckpt-every", 10,
                "--fail-at-step", 30, "--fail-attempts", "1"]
        first = self.run_trainer(args, self.env(attempt=1), expect_rc=1)
        self.assertEqual(self.complete_steps(), [10, 20])
        newest = os.path.join(self.ckpt, "step_20")
        self.run_trainer(args, self.env(attempt=2, MLSUP_RESUME_FROM=newest))
        result = self.result()
        self.assertEqual(result["nonce"], first.nonce())
        self.assertEqual(result["chain"], self.expected(first.nonce(), 60))
        self.assertEqual(result["attempts_seen"], [1, 2])
        crash, done = self.log()
        self.assertEqual((crash["exit_reason"], crash["exit_code"], crash["end_step"]), ("crash", 1, 29))
        self.assertEqual((done["exit_reason"], done["start_step"], done["resumed_from"]), ("done", 20, newest))
        self.assertLessEqual(crash["steps_executed"] + done["steps_executed"], 60 + 10)

    def test_partial_checkpoint_is_refused(self):
        """A checkpoint left by a crash mid-save has no marker and is refused; the previous one works."""
        args = ["--steps", 30, "--step-seconds", 0.002, "--ckpt-every", 10, "--partial-save-at-step", 20,
                "--fail-attempts", "1", "--layout", "megatron"]
        self.run_trainer(args, self.env(attempt=1), expect_rc=1)
        partial = os.path.join(self.ckpt, "iter_0000020")
        self.assertTrue(os.path.isdir(partial))
        self.assertFalse(os.path.exists(os.path.join(partial, "COMPLETE")))
        with self.assertRaises(ValueError):
            read_json(os.path.join(partial, "state.json"))
        self.assertEqual(read_text(os.path.join(self.ckpt, "latest_checkpointed_iteration.txt")), "20")
        refused = self.run_trainer(args, self.env(attempt=2, MLSUP_RESUME_FROM=partial), expect_rc=1)
        self.assertIn("not a complete checkpoint", refused.stderr())
        self.assertEqual(self.log()[-1]["exit_reason"], "bad-resume")
        self.run_trainer(args, self.env(attempt=3, MLSUP_RESUME_FROM=os.path.join(self.ckpt, "iter_0000010")))
        self.assert_complete(partial, 20)
        self.assertEqual(read_text(os.path.join(self.ckpt, "latest_checkpointed_iteration.txt")), "30")

    def test_resume_of_another_run_is_refused(self):
        """A checkpoint written by another run is refused."""
        self.run_trainer(["--steps", 10, "--step-seconds", 0, "--ckpt-every", 10], self.env())
        env = self.env(attempt=2, MLSUP_RUN="other", MLSUP_RESUME_FROM=os.path.join(self.ckpt, "step_10"))
        other = self.run_trainer(["--steps", 20, "--step-seconds", 0], env, expect_rc=1)
        self.assertIn("belongs to run 'selftest'", other.stderr())

    def test_usr1_saves_and_resume_redoes_no_step(self):
        """SIGUSR1 saves at the end of the step and exits 0; the resume starts exactly there."""
        t = self.start(["--steps", 400, "--step-seconds", 0.01], self.env(attempt=1))
        self.wait_for("heartbeat >= 10", lambda: t.heartbeat() >= 10)
        t.proc.send_signal(signal.SIGUSR1)
        self.assertEqual(t.wait(), 0, t.stderr())
        (line,) = self.log()
        stop = line["end_step"]
        self.assertEqual(line["exit_reason"], "signal")
        self.assertLess(stop, 400)
        self.assertEqual(self.complete_steps(), [stop])
        self.assert_complete(os.path.join(self.ckpt, f"step_{stop}"), stop)
        self.assertFalse(os.path.exists(os.path.join(self.state, "result.json")))
        self.run_trainer(["--steps", 400, "--step-seconds", 0],
                         self.env(attempt=2, MLSUP_RESUME_FROM=os.path.join(self.ckpt, f"step_{stop}")))
        resumed = self.log()[-1]
        self.assertEqual((resumed["start_step"], resumed["steps_executed"]), (stop, 400 - stop))
        self.assertEqual(self.result()["chain"], self.expected(t.nonce(), 400))

    def test_kill_switch_saves_and_exits(self):
        """The kill switch makes the training save and exit 0 without a result."""
        t = self.start(["--steps", 1000, "--step-seconds", 0.01], self.env())
        self.wait_for("heartbeat >= 5", lambda: t.heartbeat() >= 5)
        open(self.kill_switch, "w").close()
        self.assertEqual(t.wait(), 0, t.stderr())
        (line,) = self.log()
        self.assertEqual(line["exit_reason"], "kill-switch")
        self.assertEqual(self.complete_steps(), [line["end_step"]])
        self.assertFalse(os.path.exists(os.path.join(self.state, "result.json")))
        self.assertTrue(os.path.exists(self.kill_switch), "the kill switch is mlsup's to remove")

    def test_save_switch_saves_deletes_switch_and_goes_on(self):
        """The save switch makes a checkpoint (periodic ones off), is deleted, and training goes on."""
        t = self.start(["--steps", 150, "--step-seconds", 0.01], self.env())
        self.wait_for("heartbeat >= 5", lambda: t.heartbeat() >= 5)
        open(self.save_switch, "w").close()
        self.wait_for("save switch deleted", lambda: not os.path.exists(self.save_switch))
        self.assertEqual(len(self.complete_steps()), 1)
        self.assertEqual(t.wait(), 0, t.stderr())
        (step,) = self.complete_steps()
        self.assert_complete(os.path.join(self.ckpt, f"step_{step}"), step)
        self.assertEqual(self.result()["chain"], self.expected(t.nonce(), 150))
        self.assertEqual(self.log()[-1]["exit_reason"], "done")

    def start_ranks(self, args, world=2, attempt=1):
        """Starts `world` coupled ranks of one attempt sharing a rendezvous directory."""
        rendezvous = os.path.join(self.tmp, "rendezvous")
        return [self.start(args + ["--rendezvous-dir", rendezvous], self.env(attempt=attempt, rank=r, world=world))
                for r in range(world)]

    def test_two_ranks_finish_with_the_same_result(self):
        """Two coupled ranks agree on the nonce and the chain; only rank 0 writes checkpoints."""
        ranks = self.start_ranks(["--steps", 50, "--step-seconds", 0.005, "--ckpt-every", 10])
        for t in ranks:
            self.assertEqual(t.wait(), 0, t.stderr())
        nonce = ranks[0].nonce()
        self.assertEqual(ranks[1].nonce(), nonce)
        self.assertEqual(self.result()["chain"], self.expected(nonce, 50))
        lines = sorted(self.log(), key=lambda line: line["rank"])
        self.assertEqual([line["rank"] for line in lines], [0, 1])
        self.assertEqual([line["node"] for line in lines], ["n1", "n2"])
        self.assertEqual({line["chain"] for line in lines}, {self.result()["chain"]})
        self.assertEqual({line["end_step"] for line in lines}, {50})
        self.assertEqual(self.complete_steps(), [10, 20, 30, 40, 50])
        self.assertIn("saved checkpoint", ranks[0].stdout())
        self.assertNotIn("saved checkpoint", ranks[1].stdout())

    def test_frozen_rank_blocks_its_peer(self):
        """A frozen rank makes its peer block like a collective; after SIGCONT both finish."""
        ranks = self.start_ranks(["--steps", 300, "--step-seconds", 0.01])
        self.wait_for("rank 0 heartbeat >= 10", lambda: ranks[0].heartbeat() >= 10)
        ranks[1].proc.send_signal(signal.SIGSTOP)
        time.sleep(0.3)
        blocked_at = ranks[0].heartbeat()
        time.sleep(1.0)
        self.assertIsNone(ranks[0].proc.poll(), "rank 0 must block, not exit")
        self.assertEqual(ranks[0].heartbeat(), blocked_at, "rank 0 advanced while its peer was frozen")
        self.assertLess(blocked_at, 300)
        ranks[1].proc.send_signal(signal.SIGCONT)
        for t in ranks:
            self.assertEqual(t.wait(), 0, t.stderr())
        self.assertEqual(self.result()["chain"], self.expected(ranks[0].nonce(), 300))

    def test_usr1_to_one_rank_stops_all_at_the_same_step(self):
        """SIGUSR1 to rank 1 only stops both ranks at the same step after one checkpoint."""
        ranks = self.start_ranks(["--steps", 400, "--step-seconds", 0.01])
        self.wait_for("rank 1 heartbeat >= 5", lambda: ranks[1].heartbeat() >= 5)
        ranks[1].proc.send_signal(signal.SIGUSR1)
        for t in ranks:
            self.assertEqual(t.wait(), 0, t.stderr())
        lines = self.log()
        self.assertEqual({line["exit_reason"] for line in lines}, {"signal"})
        (stop,) = {line["end_step"] for line in lines}
        self.assertEqual(self.complete_steps(), [stop])

    def test_missing_peer_blocks_until_collective_timeout(self):
        """A rank whose peer never starts blocks at startup; --collective-timeout ends it with exit 1."""
        rendezvous = os.path.join(self.tmp, "rendezvous")
        started = time.monotonic()
        self.run_trainer(["--steps", 10, "--step-seconds", 0, "--collective-timeout", 0.5,
                          "--rendezvous-dir", rendezvous], self.env(rank=0, world=2), expect_rc=1)
        self.assertGreaterEqual(time.monotonic() - started, 0.5)
        line = self.log()[-1]
        self.assertEqual((line["exit_reason"], line["steps_executed"]), ("collective-timeout", 0))

    def test_fenced_attempt_writes_no_checkpoint(self):
        """A fenced attempt stops with exit 0 and writes neither checkpoint nor result."""
        fence_dir = os.path.join(self.state, "fenced")
        os.makedirs(fence_dir)
        open(os.path.join(fence_dir, "1"), "w").close()
        self.run_trainer(["--steps", 20, "--step-seconds", 0, "--ckpt-every", 1], self.env(attempt=1))
        self.assertEqual(self.log()[-1]["exit_reason"], "fenced")
        self.assertEqual(self.checkpoints(), [])
        # Fenced while running: a save requested afterwards is not carried out.
        t = self.start(["--steps", 1000, "--step-seconds", 0.01], self.env(attempt=2))
        self.wait_for("heartbeat >= 5", lambda: t.heartbeat() >= 5)
        open(os.path.join(fence_dir, "2"), "w").close()
        open(self.save_switch, "w").close()
        self.assertEqual(t.wait(), 0, t.stderr())
        self.assertEqual(self.log()[-1]["exit_reason"], "fenced")
        self.assertEqual(self.checkpoints(), [])
        self.assertTrue(os.path.exists(self.save_switch))
        self.assertFalse(os.path.exists(os.path.join(self.state, "result.json")))

    def test_fenced_peer_releases_a_blocked_rank(self):
        """Ranks blocked on a frozen peer stop with "fenced" when the attempt is fenced."""
        ranks = self.start_ranks(["--steps", 1000, "--step-seconds", 0.01], attempt=3)
        self.wait_for("rank 0 heartbeat >= 5", lambda: ranks[0].heartbeat() >= 5)
        ranks[1].proc.send_signal(signal.SIGSTOP)
        time.sleep(0.2)
        os.makedirs(os.path.join(self.state, "fenced"))
        open(os.path.join(self.state, "fenced", "3"), "w").close()
        self.assertEqual(ranks[0].wait(), 0, ranks[0].stderr())
        ranks[1].proc.send_signal(signal.SIGCONT)
        self.assertEqual(ranks[1].wait(), 0, ranks[1].stderr())
        self.assertEqual({line["exit_reason"] for line in self.log()}, {"fenced"})

    def test_every_layout_writes_its_folders_and_pointer(self):
        """Each layout names its folders and updates its pointer as the framework does."""
        pointers = {"megatron": ("latest_checkpointed_iteration.txt", "20"), "deepspeed": ("latest", "global_step20")}
        for layout, folder in LAYOUT_FOLDERS.items():
            with self.subTest(layout=layout):
                self.ckpt = os.path.join(self.tmp, f"ckpt-{layout}")
                self.run_trainer(["--steps", 20, "--step-seconds", 0, "--ckpt-every", 10, "--layout", layout],
                                 self.env())
                expected = [folder.format(10), folder.format(20)]
                if layout in pointers:
                    name, content = pointers[layout]
                    self.assertEqual(read_text(os.path.join(self.ckpt, name)), content)
                    expected.append(name)
                self.assertEqual(self.checkpoints(), sorted(expected))
                self.assertEqual([e for e in os.listdir(self.ckpt) if e.startswith(".")], [])
                for step in (10, 20):
                    self.assert_complete(os.path.join(self.ckpt, folder.format(step)), step)

    def test_slow_save_heartbeat_says_saving(self):
        """During a slow save the heartbeat reads "<step> saving" and only a hidden folder exists."""
        t = self.start(["--steps", 5, "--step-seconds", 0, "--ckpt-every", 5, "--slow-save-seconds", 1.0], self.env())
        # The heartbeat says "saving" before the save makes its folders, so wait for both.
        hidden = lambda: [e for e in os.listdir(self.ckpt) if e.endswith(".saving")] if os.path.isdir(self.ckpt) else []
        self.wait_for("heartbeat '5 saving' and a hidden folder",
                      lambda: read_text(t.heartbeat_file) == "5 saving\n" and hidden())
        self.assertEqual(self.checkpoints(), [])
        self.assertEqual(len(hidden()), 1)
        self.assertEqual(t.wait(), 0, t.stderr())
        self.assertEqual(self.complete_steps(), [5])
        self.assertEqual(read_text(t.heartbeat_file), "5\n")

    def test_eval_pass_heartbeat_says_eval(self):
        """During --eval-seconds after --eval-at-step the heartbeat reads "<N> eval", then the steps go on."""
        t = self.start(["--steps", 5, "--step-seconds", 0, "--eval-at-step", 3, "--eval-seconds", 1.0], self.env())
        self.wait_for("heartbeat '3 eval'", lambda: read_text(t.heartbeat_file) == "3 eval\n")
        self.assertEqual(t.wait(), 0, t.stderr())
        self.assertEqual(read_text(t.heartbeat_file), "5\n")
        self.assertEqual(self.log()[-1]["steps_executed"], 5)

    def test_hang_at_step_stops_before_it_for_good(self):
        """--hang-at-step N: the heartbeat stays at N-1 and the process lives on until killed."""
        self.assert_hangs_before(self.start(["--steps", 10, "--step-seconds", 0, "--hang-at-step", 4], self.env()), 4)

    def test_hang_attempts_apart_from_the_crash_attempts(self):
        """--hang-attempts: attempt 1 crashes at step 3 (--fail-attempts 1) and does not hang; attempt 2
        hangs before step 5 and does not crash."""
        args = ["--steps", 10, "--step-seconds", 0, "--fail-at-step", 3, "--fail-attempts", 1,
                "--hang-at-step", 5, "--hang-attempts", 2]
        self.run_trainer(args, self.env(), expect_rc=1)
        self.assertEqual(self.log()[-1]["exit_reason"], "crash")
        self.assert_hangs_before(self.start(args, self.env(attempt=2)), 5)

    def test_checkpoints_without_directory_is_a_do_not_retry_error(self):
        """Periodic checkpoints without a checkpoint directory end with the do-not-retry code."""
        t = self.run_trainer(["--steps", 5, "--step-seconds", 0, "--ckpt-every", 1],
                             self.env(MLSUP_CHECKPOINT_DIR=""), expect_rc=78)
        self.assertIn("need --ckpt-dir", t.stderr())
        self.assertEqual(self.log()[-1]["exit_reason"], "bad-config")

    def test_no_retry_exit_code(self):
        """--no-retry-at-step exits with $MLSUP_NO_RETRY_EXIT_CODE (78 by default)."""
        self.run_trainer(["--steps", 20, "--step-seconds", 0, "--no-retry-at-step", 5], self.env(), expect_rc=78)
        self.run_trainer(["--steps", 20, "--step-seconds", 0, "--no-retry-at-step", 5],
                         self.env(attempt=2, MLSUP_NO_RETRY_EXIT_CODE=42), expect_rc=42)
        self.assertEqual([line["exit_reason"] for line in self.log()], ["no-retry", "no-retry"])
        self.assertEqual(self.log()[0]["end_step"], 4)

    def test_sticky_bad_node_crashes_after_one_heartbeat(self):
        """A rank on a node marked sticky-bad writes one heartbeat and exits 1."""
        fault_dir = os.path.join(self.tmp, "faults")
        os.makedirs(os.path.join(fault_dir, "sticky-bad"))
        open(os.path.join(fault_dir, "sticky-bad", "n1"), "w").close()
        t = self.run_trainer(["--steps", 20, "--step-seconds", 0],
                             self.env(rank=0, world=1, MLSUP_FAULT_DIR=fault_dir), expect_rc=1)
        self.assertEqual(t.heartbeat(), 0)
        self.assertEqual(self.log()[-1]["exit_reason"], "sticky-bad-node")
        self.run_trainer(["--steps", 20, "--step-seconds", 0],
                         self.env(rank=0, world=1, SLURMD_NODENAME="n2", MLSUP_FAULT_DIR=fault_dir))

    def test_runs_without_any_environment(self):
        """Without MLSUP_* variables the trainer still runs and writes ./result.json."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MLSUP_", "SLURM"))}
        self.run_trainer(["--steps", 5, "--step-seconds", 0, "--nonce", "00ff"], env)
        result = read_json(os.path.join(self.tmp, "result.json"))
        self.assertEqual(result["chain"], self.expected("00ff", 5))
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "trainer-log.jsonl")))


if __name__ == "__main__":
    unittest.main()
