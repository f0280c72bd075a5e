"""Every rank's stacks at a hang: a real process registers faulthandler for MLSUP_STACKS_SIGNAL, is
signalled while it sleeps in C, and its file holds the header and the stack; a forked child is spared."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import unittest

import support

_RANK = textwrap.dedent("""
    import os, sys, time
    import mlsup_train as mt
    job = mt.init()
    print(job.stacks_file, flush=True)
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    print(child, flush=True)

    def stall_here():
        time.sleep(30)

    stall_here()
""")




def read(path):
    with open(path) as f:
        return f.read()


class StacksTest(unittest.TestCase):
    def test_a_rank_blocked_in_c_dumps_its_stack_into_its_own_file(self):
        campaign = support.Campaign(attempt=2)
        hang_dir = os.path.join(campaign.state_dir, "attempts", "2", "hang")
        env = dict(os.environ, **campaign.rank_env(3, node="n7"), MLSUP_STACKS_SIGNAL="USR2", MLSUP_HANG_DIR=hang_dir)
        env["PYTHONPATH"] = os.path.join(os.path.dirname(__file__), "..") + os.pathsep + env.get("PYTHONPATH", "")
        rank = subprocess.Popen([sys.executable, "-c", _RANK], env=env, stdout=subprocess.PIPE, text=True)
        try:
            path = rank.stdout.readline().strip()
            child = int(rank.stdout.readline())
            self.assertEqual(path, os.path.join(hang_dir, "rank-3.txt"))
            with open(path) as f:
                self.assertEqual(f.readline(), f"mlsup stacks: rank=3 node=n7 pid={rank.pid}\n")
            time.sleep(0.2)  # in time.sleep, in C
            os.kill(rank.pid, signal.SIGUSR2)
            os.kill(child, signal.SIGUSR2)
            self.assertTrue(support.eventually(lambda: "in stall_here" in read(path)), read(path))
            text = read(path)
            self.assertIn("(most recent call first):", text)
            self.assertEqual(text.count("in stall_here"), 1, "the forked child dumped too")
            self.assertIsNone(rank.poll(), "the rank died of the signal")
            time.sleep(0.2)
            os.kill(child, 0)  # the child ignored it (ProcessLookupError if it died)
        finally:
            rank.kill()
            rank.wait()
            rank.stdout.close()
            try:
                os.kill(child, signal.SIGKILL)
            except (ProcessLookupError, NameError, UnboundLocalError):
                pass
            campaign.cleanup()

    def test_without_the_contract_nothing_is_registered(self):
        campaign = support.Campaign()
        try:
            job = __import__("mlsup_train").Job(environ=dict(campaign.env))
            self.assertEqual(job.stacks_file, "")
        finally:
            campaign.cleanup()


if __name__ == "__main__":
    unittest.main()
