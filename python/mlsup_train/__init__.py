"""mlsup's contract with the training job, for training code in Python (standard library only; torch's
collectives when the training initialised torch.distributed).

    import mlsup_train as mt
    job = mt.init(layout="glob")           # first thing: catches the pre-timeout signal
    start = load(job.resume_path()) if job.resume_path() else 0
    for step in range(start + 1, steps + 1):
        train_one_step()
        job.heartbeat(step)
        if job.should_save():
            with job.checkpoint(step) as ckpt:
                if ckpt.dir:
                    save_into(ckpt.dir)
        if job.should_stop():
            break                          # exit 0; mlsup resubmits, or stops on the kill switch

The functions of this module act on the Job that init() made (made with the defaults on first use).
"""

from .checkpoints import DEFAULT_MARKER, LAYOUTS
from .contract import Contract, from_environment
from .decide import Decision
from .job import Job

__all__ = [
    "Contract", "DEFAULT_MARKER", "Decision", "Job", "LAYOUTS", "checkpoint", "computing", "from_environment", "heartbeat",
    "init", "job", "resume_path", "saved", "saving", "should_save", "should_stop", "waiting",
]

_job = None


def init(**options):
    """Makes the process's Job (options as Job takes them) and returns it; call it first thing."""
    global _job
    _job = Job(**options)
    return _job


def job():
    """The process's Job, made with the defaults when init() was not called."""
    return _job or init()


def resume_path():
    """The checkpoint to resume from, or None for a fresh start."""
    return job().resume_path()


def heartbeat(step, compute=None):
    """Says `step` is done (with its compute seconds: `compute`, else what computing() measured)."""
    job().heartbeat(step, compute)


def computing():
    """Context manager around the rank's own work in a step: its seconds go into the next heartbeat."""
    return job().computing()


def saving():
    """Context manager: the heartbeat says `saving` while the block runs."""
    return job().saving()


def waiting():
    """Context manager: the heartbeat says `waiting <n>` while the block is blocked on peers."""
    return job().waiting()


def should_save():
    """Whether to save now, the same on every rank."""
    return job().should_save()


def should_stop():
    """Whether to exit (code 0) now, the same on every rank."""
    return job().should_stop()


def checkpoint(step, all_ranks=False, folder=None):
    """Context manager: saves the checkpoint of `step` atomically (see Job.checkpoint)."""
    return job().checkpoint(step, all_ranks, folder)


def saved():
    """Tells that a checkpoint was saved by other means (the save switch is done with)."""
    job().saved()
