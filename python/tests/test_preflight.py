"""The multi-node preflight with real torch (gloo, CPU): every task of a three-node job started here as a
process; all join and reduce; one that never starts is named by rank 0 with its node; without rank 0
the others say they heard no verdict. torch missing is a failure: the preflight needs it."""

import os
import socket
import subprocess
import sys
import unittest

import support  # noqa: F401  (puts this checkout's package first on sys.path)

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NODES = ["gpu-1", "gpu-2", "gpu-3"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(rank, port, deadline):
    """Task `rank` of the three-node job, as the templates start it on node `rank`."""
    env = dict(os.environ, SLURM_PROCID=str(rank), SLURM_NTASKS="3", SLURMD_NODENAME=_NODES[rank],
               MLSUP_PREFLIGHT_NODES=",".join(_NODES), MLSUP_PREFLIGHT_DEADLINE=str(deadline),
               MASTER_ADDR="127.0.0.1", MLSUP_PREFLIGHT_PORT=str(port))
    env["PYTHONPATH"] = _PACKAGE + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", "mlsup_train.preflight", "--backend", "gloo"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(tasks):
    """Each task's (exit code, stderr)."""
    out = []
    for t in tasks:
        _, err = t.communicate(timeout=60)
        out.append((t.returncode, err))
    return out


class PreflightTest(unittest.TestCase):
    def setUp(self):
        try:
            import torch.distributed  # noqa: F401
        except ImportError:
            self.fail("torch is not importable by this Python (Debian's python3-torch): the preflight needs it")

    def test_every_node_joins_and_the_all_reduce_sums_them(self):
        port = free_port()
        results = finish([start(r, port, 20) for r in range(3)])
        self.assertEqual([code for code, _ in results], [0, 0, 0], results)
        self.assertIn("mlsup preflight: 3 nodes joined and reduced", results[0][1])

    def test_a_node_whose_task_never_joins_is_named_by_rank_0(self):
        port = free_port()
        results = finish([start(r, port, 10) for r in (0, 1)])
        self.assertEqual(results[0][0], 3, results)
        self.assertIn("mlsup preflight: rank 2 on gpu-3 did not join within 10 s", results[0][1])
        self.assertNotIn("gpu-2 did not join", results[0][1])
        self.assertEqual(results[1][0], 0, "rank 1 joined: the absence is rank 0's to tell")

    def test_without_rank_0_the_others_say_so_and_blame_no_node(self):
        port = free_port()
        results = finish([start(r, port, 2) for r in (1, 2)])
        for code, err in results:
            self.assertEqual(code, 5, err)
            self.assertRegex(err, r"mlsup preflight: rank \d on gpu-\d: (cannot reach the store|no verdict)")
            self.assertNotIn("did not join", err)


if __name__ == "__main__":
    unittest.main()


class PlaceTest(unittest.TestCase):
    def test_the_store_port_stays_below_the_ephemeral_ports(self):
        from mlsup_train.preflight import Place
        ports = {Place({"SLURM_JOB_ID": str(job)}).port for job in range(0, 100000, 7)}
        self.assertTrue(all(30000 <= p < 32768 for p in ports), (min(ports), max(ports)))
        self.assertEqual(Place({"SLURM_JOB_ID": "5", "MLSUP_PREFLIGHT_PORT": "41000"}).port, 41000)
