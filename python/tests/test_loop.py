"""The README's plain loop in a process of its own: the save switch, then the pre-timeout signal."""

import os
import signal
import subprocess
import sys
import unittest

import support

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The plain loop of the README; a "model" is the step it reached.
LOOP = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import mlsup_train as mt

job = mt.init(layout="glob")
resume = mt.resume_path()
step = int(open(os.path.join(resume, "model")).read()) if resume else 0
print("ready", flush=True)
while step < 100000:
    time.sleep(0.01)
    step += 1
    mt.heartbeat(step)
    if mt.should_save():
        with mt.checkpoint(step) as ckpt:
            if ckpt.dir:
                with open(os.path.join(ckpt.dir, "model"), "w") as f:
                    f.write(str(step))
        print("saved", step, flush=True)
    if mt.should_stop():
        print("stopped", step, ",".join(mt.job().stop_reasons), flush=True)
        sys.exit(0)
"""




class PlainLoopTest(unittest.TestCase):
    def test_save_switch_then_signal(self):
        campaign = support.Campaign()
        self.addCleanup(campaign.cleanup)
        env = dict(os.environ, **campaign.env)
        proc = subprocess.Popen([sys.executable, "-c", LOOP, PACKAGE], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.addCleanup(proc.kill)
        self.assertEqual(proc.stdout.readline().strip(), "ready")
        heartbeat = campaign.beat_file(0)
        self.assertTrue(support.eventually(lambda: os.path.exists(heartbeat), 30), "a heartbeat is written")
        switch = campaign.touch("MLSUP_SAVE_SWITCH")
        first = proc.stdout.readline().split()
        self.assertEqual(first[0], "saved")
        self.assertFalse(os.path.exists(switch), "the save switch is deleted once the save is in place")
        proc.send_signal(signal.SIGUSR1)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)
        saved, stopped = [line.split() for line in out.splitlines()]
        last = saved[1]
        self.assertEqual(saved, ["saved", last], "the signal's save")
        self.assertEqual(stopped, ["stopped", last, "signal"], "at the step it saved")
        self.assertGreater(int(last), int(first[1]))
        with open(os.path.join(campaign.checkpoint_dir, f"step_{last}", "model")) as f:
            self.assertEqual(f.read(), last)
        with open(heartbeat) as f:
            self.assertEqual(f.read(), f"{last}\n")
        self.assertEqual(sorted(os.listdir(campaign.checkpoint_dir)), sorted([f"step_{first[1]}", f"step_{last}"]))


if __name__ == "__main__":
    unittest.main()
