"""Ranks never disagree: rank 0's view of the switches and any rank's signal, fence or memory reach every rank.

With a fake all-reduce among threads always; with torch.distributed (gloo, two processes) where torch is
importable by this Python.
"""

import json
import os
import signal
import subprocess
import sys
import unittest

import support
import mlsup_train
from mlsup_train import ranks


def torch_importable():
    """Whether this Python can import torch (python3-torch installs it for /usr/bin/python3)."""
    probe = subprocess.run([sys.executable, "-c", "import torch.distributed"], capture_output=True)
    return probe.returncode == 0


class FakeAllReduceTest(unittest.TestCase):
    SIZE = 4

    def setUp(self):
        self.campaign = support.Campaign()
        self.world = support.FakeWorld(self.SIZE)

    def tearDown(self):
        self.campaign.cleanup()

    def jobs(self):
        # Made in the main thread (signal handlers can only be installed there); used from the ranks' threads.
        return [mlsup_train.Job(environ=self.campaign.rank_env(r), reduce=self.world.reducer(r), signals=())
                for r in range(self.SIZE)]

    def decide_all(self, jobs):
        return self.world.run(lambda r: (jobs[r].should_save(), jobs[r].should_stop(), jobs[r].stop_reasons))

    def test_a_switch_only_rank_0_looks_at_reaches_every_rank(self):
        jobs = self.jobs()
        self.campaign.touch("MLSUP_SAVE_SWITCH")
        self.assertEqual(self.decide_all(jobs), [(True, False, ("save",))] * self.SIZE)
        self.assertEqual(self.world.calls, self.SIZE, "one all-reduce per decision on each rank")

    def test_ranks_that_see_the_switch_differently_still_agree(self):
        # Rank 0 alone decides about switches: a rank whose file system shows the kill switch later, or
        # earlier, does not matter. Here only ranks 1-3 "see" it.
        jobs = self.jobs()
        for j in jobs[1:]:
            j.raised = lambda: {"kill"}
        self.assertEqual(self.decide_all(jobs), [(False, False, ())] * self.SIZE)

    def test_a_signal_on_one_rank_stops_every_rank(self):
        jobs = self.jobs()
        jobs[2]._signal.received = signal.SIGUSR1  # the signal reached rank 2's process only
        self.assertEqual(self.decide_all(jobs), [(True, True, ("signal",))] * self.SIZE)

    def test_a_rank_over_its_memory_limit_stops_every_rank(self):
        jobs = self.jobs()
        jobs[3].memory = mlsup_train.memory.Thresholds(rss_limit=1)
        self.assertEqual(self.decide_all(jobs), [(True, True, ("memory",))] * self.SIZE)

    def test_fenced_vetoes_the_save_on_every_rank(self):
        jobs = self.jobs()
        self.campaign.touch("MLSUP_KILL_SWITCH")
        self.campaign.fence()
        self.assertEqual(self.decide_all(jobs), [(False, True, ("fenced", "kill"))] * self.SIZE)

    def test_a_shared_checkpoint_every_rank_writes_into(self):
        jobs = self.jobs()

        def save(r):
            with jobs[r].checkpoint(8, all_ranks=True) as ckpt:
                with open(os.path.join(ckpt.dir, f"shard-{r}"), "w") as f:
                    f.write(str(r))
            return ckpt.committed

        self.assertEqual(self.world.run(save), [True] * self.SIZE)
        final = os.path.join(self.campaign.checkpoint_dir, "step_8")
        self.assertEqual(sorted(os.listdir(final)), ["COMPLETE"] + [f"shard-{r}" for r in range(self.SIZE)])

    def test_rank_0_saves_the_others_wait_and_learn_the_outcome(self):
        jobs = self.jobs()

        def save(r):
            with jobs[r].checkpoint(9) as ckpt:
                if ckpt.dir:
                    with open(os.path.join(ckpt.dir, "model"), "w") as f:
                        f.write("w")
            return (ckpt.dir is not None, ckpt.committed)

        self.assertEqual(self.world.run(save), [(True, True)] + [(False, True)] * (self.SIZE - 1))


WORKER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import torch.distributed as dist
import mlsup_train
rank = int(os.environ["RANK"])
dist.init_process_group("gloo", init_method="file://" + sys.argv[2], rank=rank, world_size=2)
job = mlsup_train.Job(signals=())
if rank == 1:
    job._signal.received = 10        # SIGUSR1, as if the signal had reached rank 1's process only
out = {"first": [job.should_save(), job.should_stop(), list(job.stop_reasons)]}
with job.checkpoint(3) as ckpt:
    if ckpt.dir:
        open(os.path.join(ckpt.dir, "model"), "w").close()
out["committed"] = ckpt.committed
out["rank"] = mlsup_train.ranks.rank()
dist.destroy_process_group()
print(json.dumps(out))
"""


class TorchGlooTest(unittest.TestCase):
    """Two processes joined by torch.distributed's gloo backend."""

    def test_two_processes_agree(self):
        if not torch_importable():
            print(f"\n  torch is not importable by {sys.executable}: the gloo test did NOT run", flush=True)
            self.skipTest("torch is not importable")
        print(f"\n  torch is importable by {sys.executable}: the gloo test runs", flush=True)
        campaign = support.Campaign()
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        rendezvous = os.path.join(campaign.root, "rendezvous")
        campaign.touch("MLSUP_SAVE_SWITCH")  # seen by rank 0 alone
        procs = []
        for rank in (0, 1):
            env = dict(os.environ, **campaign.rank_env(rank), WORLD_SIZE="2")
            procs.append(subprocess.Popen([sys.executable, "-c", WORKER, package, rendezvous], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        try:
            outputs = [p.communicate(timeout=120) for p in procs]
        finally:
            for p in procs:
                p.kill()
            campaign.cleanup()
        results = []
        for p, (out, err) in zip(procs, outputs):
            self.assertEqual(p.returncode, 0, err)
            results.append(json.loads(out.strip().splitlines()[-1]))
        self.assertEqual([r["rank"] for r in results], [0, 1])
        for r in results:
            self.assertEqual(r["first"], [True, True, ["signal", "save"]])
            self.assertTrue(r["committed"])


class FakeDist:
    """Stands in for an initialised torch.distributed of `size` ranks whose peers all raised `peer` (tests
    what ranks.py asks of torch: the tensor, the device for the backend, the MAX reduction)."""

    class ReduceOp:
        MAX = "max"

    def __init__(self, backend, peer, size=2):
        self.backend, self.peer, self.size, self.calls = backend, peer, size, []

    def is_available(self):
        return True

    def is_initialized(self):
        return True

    def get_rank(self):
        return 1

    def get_world_size(self):
        return self.size

    def get_backend(self):
        return self.backend

    def all_reduce(self, tensor, op):
        self.calls.append((tensor.device, tensor.dtype, op))
        tensor.values = [max(a, b) for a, b in zip(tensor.values, self.peer)]


class FakeTorch:
    int64 = "int64"

    class cuda:
        @staticmethod
        def current_device():
            return 3

    class Tensor:
        def __init__(self, values, dtype, device):
            self.values, self.dtype, self.device = values, dtype, device

        def tolist(self):
            return list(self.values)

    @staticmethod
    def device(kind, index=None):
        return kind if index is None else f"{kind}:{index}"

    @classmethod
    def tensor(cls, values, dtype, device):
        return cls.Tensor(list(values), dtype, device)


class TorchCallsTest(unittest.TestCase):
    """What ranks.py asks of torch.distributed, with stand-ins (the real thing: TorchGlooTest)."""

    def with_fakes(self, dist):
        saved = {name: sys.modules.get(name) for name in ("torch", "torch.distributed")}

        def restore():
            for name, module in saved.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module

        self.addCleanup(restore)
        sys.modules["torch"], sys.modules["torch.distributed"] = FakeTorch, dist

    def test_gloo_reduces_on_the_cpu_and_rank_comes_from_the_group(self):
        dist = FakeDist("gloo", peer=[1, 0, 0])
        self.with_fakes(dist)
        self.assertEqual(ranks.all_reduce_max([0, 0, 1]), [1, 0, 1])
        self.assertEqual(dist.calls, [("cpu", "int64", "max")])
        self.assertEqual((ranks.rank({"RANK": "0"}), ranks.world_size({})), (1, 2))

    def test_nccl_reduces_on_this_ranks_gpu(self):
        dist = FakeDist("nccl", peer=[0])
        self.with_fakes(dist)
        ranks.all_reduce_max([1])
        self.assertEqual(dist.calls, [("cuda:3", "int64", "max")])


class NoTorchTest(unittest.TestCase):
    def test_without_a_process_group_a_world_of_one(self):
        self.assertEqual(ranks.all_reduce_max([0, 1, 0]), [0, 1, 0])
        self.assertEqual(ranks.rank({"SLURM_PROCID": "3"}), 3)
        self.assertEqual(ranks.rank({"RANK": "5", "SLURM_PROCID": "1"}), 5, "torchrun's rank first")
        self.assertEqual(ranks.world_size({"SLURM_NTASKS": "8"}), 8)


if __name__ == "__main__":
    unittest.main()
