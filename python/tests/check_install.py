"""Installs the helper as a user would, offline, into a fresh virtual environment, and uses it from there.

    /usr/bin/python3 -m venv --system-site-packages V && V/bin/pip install --no-build-isolation ./python

Debian's pip, setuptools and wheel (python3-pip, python3-setuptools, python3-wheel, python3-venv) are
all it needs: no package index is reached. The source is copied first, so the build leaves nothing in
the checkout. Exits 0 when the installed package imports and works; prints its wall time.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A training's first steps with the installed package, outside the checkout.
SMOKE = r"""
import os, sys
import mlsup_train as mt
assert mt.__file__.startswith(sys.prefix), mt.__file__
job = mt.init()
job.heartbeat(1)
with job.checkpoint(1) as ckpt:
    open(os.path.join(ckpt.dir, "model"), "w").close()
assert ckpt.committed and sorted(os.listdir(ckpt.path)) == ["COMPLETE", "model"]
assert not mt.should_save() and not mt.should_stop()
print("installed at", os.path.dirname(mt.__file__))
"""


def run(argv, **kwargs):
    """Runs argv; on failure prints its output and exits 1."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)
    if done.returncode != 0:
        print(f"FAILED ({done.returncode}): {' '.join(argv)}\n{done.stdout}{done.stderr}", file=sys.stderr)
        sys.exit(1)
    return done.stdout


def main():
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mlsup-train-install-") as tmp:
        source = os.path.join(tmp, "python")
        shutil.copytree(SOURCE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
        venv = os.path.join(tmp, "V")
        run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
        run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", "-q", source], cwd=tmp)
        state = os.path.join(tmp, "state")
        env = dict(os.environ, MLSUP_STATE_DIR=state, MLSUP_ATTEMPT="1",
                   MLSUP_CHECKPOINT_DIR=os.path.join(tmp, "ckpt"), MLSUP_HEARTBEAT_FILE=os.path.join(state, "hb"),
                   SLURMD_NODENAME="n1")
        for name in ("PYTHONPATH", "RANK", "SLURM_PROCID"):
            env.pop(name, None)
        print(run([os.path.join(venv, "bin", "python"), "-c", SMOKE], cwd=tmp, env=env).strip())
        with open(os.path.join(state, "hb.d", "n1.0")) as f:  # rank 0's own heartbeat file
            assert f.read() == "1\n"
    print(f"check_install: pip install into a fresh venv and a smoke run passed in {time.monotonic() - started:.1f}s")


if __name__ == "__main__":
    main()
