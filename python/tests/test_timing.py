"""A rank's own compute per step: the timer on a fake clock, the heartbeat's compute= word, and real DDP
(gloo, two processes) where rank 1 is slow in its forward: its compute shows it, rank 0's does not, though
both ranks' steps take as long (rank 0 waits in the all-reduce)."""

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest

import support  # noqa: F401  (puts this checkout's package first on sys.path)
from mlsup_train import Job, heartbeat_file, timing

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class TimerTest(unittest.TestCase):
    def test_a_block_ends_where_the_last_bucket_was_ready_else_at_its_end(self):
        clock = FakeClock()
        timer = timing.ComputeTimer(clock)
        self.assertIsNone(timer.take(), "nothing marked")
        with timer.computing():
            clock.now += 0.2
            timer.bucket_ready()
            clock.now += 0.5
            timer.bucket_ready()  # the last bucket: compute ends here
            clock.now += 3.0      # the wait for the others
        self.assertAlmostEqual(timer.take(), 0.7)
        with timer.computing():
            clock.now += 0.4      # no DDP hook: the block's end
        with timer.computing():
            clock.now += 0.1      # gradient accumulation: a second block in the same step
        self.assertAlmostEqual(timer.take(), 0.5)
        self.assertIsNone(timer.take(), "taken: a fresh start")

    def test_a_bucket_before_the_block_does_not_end_it(self):
        clock = FakeClock()
        timer = timing.ComputeTimer(clock)
        timer.bucket_ready()
        with timer.computing():
            clock.now += 0.3
        self.assertAlmostEqual(timer.take(), 0.3)


class HeartbeatComputeTest(unittest.TestCase):
    def test_compute_is_the_last_word_after_the_phases(self):
        self.assertEqual(heartbeat_file.render(4, [], 0.25), "4 compute=0.2500\n")
        self.assertEqual(heartbeat_file.render(4, [["saving", 0], ["waiting", 2]], 1.5),
                         "4 saving waiting 2 compute=1.5000\n")

    def test_the_job_writes_what_computing_measured_since_the_last_beat(self):
        with tempfile.TemporaryDirectory() as d:
            job = Job(environ={"MLSUP_HEARTBEAT_FILE": os.path.join(d, "hb"), "RANK": "0", "SLURMD_NODENAME": "n1"})
            path = os.path.join(d, "hb.d", "n1.0")  # rank 0's own file
            clock = FakeClock()
            job.timer = timing.ComputeTimer(clock)
            with job.computing():
                clock.now += 0.125
            job.heartbeat(7)
            with open(path) as f:
                self.assertEqual(f.read(), "7 compute=0.1250\n")
            job.heartbeat(8)  # nothing marked in this step: no compute word
            with open(path) as f:
                self.assertEqual(f.read(), "8\n")
            job.heartbeat(9, compute=2.0)  # the training's own figure
            with open(path) as f:
                self.assertEqual(f.read(), "9 compute=2.0000\n")


_RANK = textwrap.dedent("""
    import sys, time, torch, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from mlsup_train import timing
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(256, 256))
    timer = timing.ComputeTimer()
    model.register_comm_hook(None, timing.ddp_hook(timer))
    for step in range(3):
        t0 = time.monotonic()
        with timer.computing():
            out = model(torch.randn(64, 256))
            if rank == 1:
                time.sleep(0.6)  # slow in its own compute
            out.sum().backward()
        print(f"{timer.take():.3f} {time.monotonic() - t0:.3f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()  # gloo's threads joined before exit (else: terminate called at exit)
""")


class DdpHookTest(unittest.TestCase):
    def test_the_slow_rank_shows_in_its_compute_not_in_its_step_time(self):
        try:
            import torch.distributed  # noqa: F401
        except ImportError:
            self.fail("torch is not importable by this Python (Debian's python3-torch): the DDP timing needs it")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for rank in (0, 1):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE="2")
            env["PYTHONPATH"] = _PACKAGE + os.pathsep + env.get("PYTHONPATH", "")
            procs.append(subprocess.Popen([sys.executable, "-c", _RANK], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        lines = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            lines.append([tuple(map(float, line.split())) for line in out.splitlines()])
        print(f"\n  rank 0 (compute, step s): {lines[0]}\n  rank 1: {lines[1]}", flush=True)
        for (compute0, step0), (compute1, step1) in zip(lines[0][1:], lines[1][1:]):  # the first step warms up
            self.assertGreater(compute1, 0.55, lines)
            self.assertLess(compute0, 0.3, lines)
            self.assertGreater(step0, 0.55, f"rank 0 waited for rank 1 in the all-reduce: {lines}")


if __name__ == "__main__":
    unittest.main()
