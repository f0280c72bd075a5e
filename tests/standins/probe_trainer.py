#!/usr/bin/env python3
"""A tiny training process for tests: standard library only, no model, no GPU.

It loops over steps of --step-time seconds, and rank 0 writes the current step to
$MLSUP_HEARTBEAT_FILE (when set) after every step. It stops in one of three ways:

  * the pre-timeout signal (--signal, USR1 by default): it appends
    "got USR1 rank=R node=NODE pid=PID" to --out, as if it had saved a checkpoint, and exits 0;
    a second delivery before it exits appends a second line, so tests can see duplicates;
  * the kill switch file (--kill-switch-path, else $MLSUP_KILL_SWITCH) exists: it exits 0;
  * --steps N steps are done: it exits with --exit-code (0 by default).

With MLSUP_STACKS_SIGNAL and MLSUP_HANG_DIR set (mlsup's contract), it registers the Python
helper's stack dump for that signal, as a training on mlsup_train does.

The save switch (--save-switch-path, else $MLSUP_SAVE_SWITCH) makes rank 0 print a "saved" line
and delete the file. Every rank looks at the switch files itself: a real training would have
rank 0 decide and share the decision, but these ranks have no collective to share it with.

Arguments it does not know (Megatron's --save/--load, DeepSpeed's --local_rank, ...) are
accepted and printed, so any launcher template can start it.
"""
import argparse
import os
import signal
import sys
import time

# The helper from this checkout (its stack dump at a hang); the probe stays standard library only.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from mlsup_train import contract, stacks  # noqa: E402


def parse_args():
    # allow_abbrev=False: otherwise a Megatron-style "--save DIR" would be taken for
    # "--save-switch-path DIR".
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--out", help="file to append a line to for every pre-timeout signal")
    parser.add_argument("--steps", type=int, default=0, help="steps to run; 0 runs until stopped")
    parser.add_argument("--step-time", type=float, default=0.2, help="seconds per step")
    parser.add_argument("--exit-code", type=int, default=0, help="exit status after --steps")
    parser.add_argument("--signal", default="USR1", help="the pre-timeout signal (name or number)")
    parser.add_argument("--ready-dir", default="", help="once its handler is in place, it creates a file named by its pid here")
    parser.add_argument("--kill-switch-path", default=os.environ.get("MLSUP_KILL_SWITCH", ""))
    parser.add_argument("--save-switch-path", default=os.environ.get("MLSUP_SAVE_SWITCH", ""))
    return parser.parse_known_args()


def signal_number(text):
    if text.isdigit():
        return signal.Signals(int(text))
    name = text.upper()
    return signal.Signals[name if name.startswith("SIG") else "SIG" + name]


def identity():
    # torchrun, accelerate and deepspeed set RANK; under a bare srun only SLURM_PROCID exists.
    rank = os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0"))
    return int(rank), os.environ.get("SLURMD_NODENAME", "")


def say(message):
    print(f"probe_trainer: {message}", flush=True)


def write_heartbeat(path, text):
    # Written to a temporary file and renamed, so a reader never sees half a line.
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.replace(tmp, path)


def main():
    args, unknown = parse_args()
    rank, node = identity()
    sig = signal_number(args.signal)
    sig_name = sig.name[3:]
    heartbeat = os.environ.get("MLSUP_HEARTBEAT_FILE", "") if rank == 0 else ""
    if heartbeat:
        os.makedirs(os.path.dirname(os.path.abspath(heartbeat)), exist_ok=True)
    stop = {"signalled": False}

    def on_signal(signum, frame):
        stop["signalled"] = True
        if args.out:
            with open(args.out, "a") as f:
                f.write(f"got {sig_name} rank={rank} node={node} pid={os.getpid()}\n")

    signal.signal(sig, on_signal)
    stacks.register(contract.from_environment(), rank, os.environ)
    if args.ready_dir:
        os.makedirs(args.ready_dir, exist_ok=True)
        open(os.path.join(args.ready_dir, str(os.getpid())), "w").close()
    env = os.environ.get
    say(f"start rank={rank} node={node} pid={os.getpid()} world={env('WORLD_SIZE', '')} "
        f"attempt={env('MLSUP_ATTEMPT', '')} resume_from={env('MLSUP_RESUME_FROM', '')!r} "
        f"kill_switch={args.kill_switch_path!r} save_switch={args.save_switch_path!r} "
        f"extra_args={unknown}")

    step = 0
    while True:
        if stop["signalled"]:
            if heartbeat:
                write_heartbeat(heartbeat, f"{step} saving")
            say(f"rank={rank} got {sig_name} at step {step}, saved, exiting")
            return 0
        if args.kill_switch_path and os.path.exists(args.kill_switch_path):
            say(f"rank={rank} kill switch at step {step}, exiting")
            return 0
        if rank == 0 and args.save_switch_path and os.path.exists(args.save_switch_path):
            say(f"rank=0 save switch at step {step}, saved")
            try:
                os.unlink(args.save_switch_path)
            except FileNotFoundError:
                pass
        if args.steps and step >= args.steps:
            say(f"rank={rank} done after {step} steps")
            return args.exit_code
        time.sleep(args.step_time)
        step += 1
        if heartbeat:
            write_heartbeat(heartbeat, str(step))


if __name__ == "__main__":
    sys.exit(main())
