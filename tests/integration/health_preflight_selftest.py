#!/usr/bin/env python3
"""Self-test of examples/health: gpu_preflight.py and gpu_health.sh's use of it, without GPUs.

A stand-in `torch` module (uniform tensors only: a value, a length, a device) plays a node's GPUs, and a
stand-in `nvidia-smi` lists them, so the verdicts (all there, one missing, a failing allocation, a wrong
collective, no torch at all) are checked here; on a GPU node the same scripts run against the real torch.
"""

import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEALTH = os.path.join(REPO, "examples", "health")

# The stand-in torch: FAKE_GPUS devices; FAKE_SEEN of them visible; FAKE_BAD_GPU fails its allocation;
# FAKE_BAD_REDUCE=1 makes the all-reduce sum wrong; FAKE_NO_NCCL=1 takes NCCL away; FAKE_BROKEN=1 breaks the API.
FAKE_TORCH = r'''
import os
int32 = "int32"
_gpus = int(os.environ.get("FAKE_GPUS", "0"))
_seen = int(os.environ.get("FAKE_SEEN", str(_gpus)))

class Tensor:
    def __init__(self, value, n, device):
        self.value, self.n, self.device = value, n, device
    def sum(self):
        return Tensor(self.value * self.n, 1, self.device)
    def item(self):
        return self.value
    def all(self):
        return self
    def to(self, device):
        return Tensor(self.value, self.n, device)
    def __add__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other, self.n, self.device)
        return Tensor(self.value + other.value, self.n, self.device)
    __radd__ = __add__
    def __eq__(self, other):
        return Tensor(self.value == other, self.n, self.device)

def _on(device):
    index = int(device.split(":")[1])
    if index >= _seen:
        raise RuntimeError(f"CUDA error: invalid device ordinal {index}")
    if str(index) == os.environ.get("FAKE_BAD_GPU"):
        raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore")
    return device

def ones(n, dtype=None, device="cpu"):
    return Tensor(1.0, n, _on(device))

def full(shape, value, device="cpu"):
    return Tensor(value, shape[0], _on(device))

from . import cuda
'''

FAKE_CUDA = r'''
import os
_seen = int(os.environ.get("FAKE_SEEN", os.environ.get("FAKE_GPUS", "0")))

class nccl:
    @staticmethod
    def is_available(tensors):
        return os.environ.get("FAKE_NO_NCCL") != "1"

    @staticmethod
    def all_reduce(tensors):
        total = sum(t.value for t in tensors) + (1 if os.environ.get("FAKE_BAD_REDUCE") == "1" else 0)
        for t in tensors:
            t.value = total

def is_available():
    return _seen > 0

def device_count():
    if os.environ.get("FAKE_BROKEN") == "1":
        raise AttributeError("module 'torch.cuda' has no attribute 'device_count'")
    return _seen

def synchronize(index):
    pass
'''

FAKE_NVIDIA_SMI = r'''#!/bin/sh
case "$*" in
  *-L*) i=0; while [ "$i" -lt "${FAKE_GPUS:-0}" ]; do echo "GPU $i: Fake GPU (UUID: GPU-$i)"; i=$((i + 1)); done ;;
  *) echo "==============NVSMI LOG=============="; echo "    Volatile"; echo "        DRAM Uncorrectable : 0" ;;
esac
'''


class Preflight(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mlsup-health-")
        cls.fake = os.path.join(cls.tmp.name, "fake")
        os.makedirs(os.path.join(cls.fake, "torch", "cuda"))
        with open(os.path.join(cls.fake, "torch", "__init__.py"), "w") as f:
            f.write(FAKE_TORCH)
        with open(os.path.join(cls.fake, "torch", "cuda", "__init__.py"), "w") as f:
            f.write(FAKE_CUDA)
        # No torch: a module that is not there, whether or not this machine has a real torch installed.
        cls.none = os.path.join(cls.tmp.name, "none")
        os.makedirs(os.path.join(cls.none, "torch"))
        with open(os.path.join(cls.none, "torch", "__init__.py"), "w") as f:
            f.write("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
        cls.bin = os.path.join(cls.tmp.name, "bin")
        os.makedirs(cls.bin)
        smi = os.path.join(cls.bin, "nvidia-smi")
        with open(smi, "w") as f:
            f.write(FAKE_NVIDIA_SMI)
        os.chmod(smi, 0o755)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_script(self, argv, with_torch=True, **env):
        environ = {"PATH": f"{self.bin}:/usr/bin:/bin", "LANG": "C", "MLSUP_NODE": "n1",
                   "GPU_HEALTH_PYTHON": sys.executable, **env}
        environ["PYTHONPATH"] = self.fake if with_torch else self.none
        done = subprocess.run(argv, capture_output=True, text=True, env=environ, timeout=60)
        return done.returncode, (done.stdout.splitlines() or [""])[0]

    def preflight(self, *args, **env):
        return self.run_script([sys.executable, os.path.join(HEALTH, "gpu_preflight.py"), *args], **env)

    def health(self, **env):
        return self.run_script(["sh", os.path.join(HEALTH, "gpu_health.sh")], **env)

    def test_a_healthy_node(self):
        rc, line = self.preflight("--expect", "4", FAKE_GPUS="4")
        self.assertEqual(rc, 0, line)
        self.assertRegex(line, r"^torch: 4 GPUs, 64 MiB each, NCCL all-reduce across 4 GPUs: ok in \d+\.\ds$")

    def test_without_nccl_the_gpus_copy(self):
        rc, line = self.preflight(FAKE_GPUS="2", FAKE_NO_NCCL="1")
        self.assertEqual((rc, "copies across 2 GPUs (no NCCL)" in line), (0, True), line)

    def test_a_gpu_torch_does_not_see(self):
        self.assertEqual(self.preflight("--expect", "8", FAKE_GPUS="8", FAKE_SEEN="7"),
                         (1, "torch sees 7 of the 8 GPUs nvidia-smi lists"))
        self.assertEqual(self.preflight("--expect", "8", FAKE_GPUS="8", FAKE_SEEN="0"),
                         (1, "torch sees no GPU where nvidia-smi lists 8"))

    def test_a_failing_allocation(self):
        self.assertEqual(self.preflight(FAKE_GPUS="4", FAKE_BAD_GPU="2"),
                         (1, "GPU 2: a 64 MiB allocation failed: CUDA error: an illegal memory access was encountered"))

    def test_a_wrong_collective(self):
        self.assertEqual(self.preflight(FAKE_GPUS="3", FAKE_BAD_REDUCE="1"),
                         (1, "the NCCL all-reduce across 3 GPUs gave a wrong sum on GPU 0"))

    def test_a_check_that_breaks_judges_nothing(self):
        self.assertEqual(self.preflight(FAKE_GPUS="2", FAKE_BROKEN="1"),
                         (0, "note: the torch preflight could not run: AttributeError: "
                             "module 'torch.cuda' has no attribute 'device_count'"))

    def test_no_torch_or_no_gpu_is_a_note(self):
        rc, line = self.preflight(with_torch=False)
        self.assertEqual((rc, line), (0, "note: torch is not importable: the torch preflight is skipped"))
        self.assertEqual(self.preflight(FAKE_GPUS="0"), (0, "note: torch sees no GPU: nothing to check"))

    def test_gpu_health_runs_it_and_ends_its_line_with_the_verdict(self):
        rc, line = self.health(FAKE_GPUS="2")
        self.assertEqual(rc, 0, line)
        self.assertRegex(line, r"^gpus healthy on n1 \(torch: 2 GPUs, 64 MiB each, NCCL all-reduce across 2 GPUs: ok")
        self.assertEqual(self.health(FAKE_GPUS="2", FAKE_SEEN="1"),
                         (1, "torch preflight failed on n1: torch sees 1 of the 2 GPUs nvidia-smi lists"))

    def test_gpu_health_without_torch_or_asked_not_to(self):
        rc, line = self.health(FAKE_GPUS="2", GPU_HEALTH_TORCH="no")
        self.assertEqual((rc, line), (0, "gpus healthy on n1"))
        rc, line = self.health(with_torch=False, FAKE_GPUS="2")
        self.assertEqual((rc, line), (0, "gpus healthy on n1 (note: torch is not importable: the torch preflight is skipped)"))

    def test_gpu_health_without_nvidia_smi_is_unchanged(self):
        rc, line = self.run_script(["sh", os.path.join(HEALTH, "gpu_health.sh")], PATH="/usr/bin:/bin")
        if os.path.exists("/usr/bin/nvidia-smi"):
            self.skipTest("this machine has nvidia-smi")
        self.assertEqual((rc, line), (0, "no nvidia-smi on n1: no GPU to check"))


if __name__ == "__main__":
    unittest.main()
