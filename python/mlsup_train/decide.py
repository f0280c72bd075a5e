"""What the training does about what it saw: pure, from the flags every rank raised, combined."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Flag:
    """One thing a rank can see, and what it asks of the training."""

    name: str
    save: bool          # save a checkpoint
    stop: bool          # then exit 0 (mlsup decides what comes next)
    rank0_only: bool    # only rank 0 looks, so no two ranks see the file system differently
    veto_save: bool = False  # no checkpoint may be written at all


# Every flag, in the order of their positions in the shared vector (the reasons are told in this order).
FLAGS = (
    Flag("fenced", save=False, stop=True, rank0_only=False, veto_save=True),  # mlsup gave up on the attempt
    Flag("kill", save=True, stop=True, rank0_only=True),       # the kill switch: save, exit, nothing more
    Flag("signal", save=True, stop=True, rank0_only=False),    # the pre-timeout signal: save before the limit
    Flag("memory", save=True, stop=True, rank0_only=False),    # over the memory threshold: exit before a leak kills
    Flag("save", save=True, stop=False, rank0_only=True),      # the save switch: save and go on
)
NAMES = tuple(f.name for f in FLAGS)


@dataclasses.dataclass(frozen=True)
class Decision:
    """What every rank does after one check; equal on every rank."""

    save: bool = False
    stop: bool = False
    reasons: tuple = ()

    def __bool__(self):
        return self.save or self.stop


def vector(raised, rank):
    """This rank's 0/1 vector for `raised` (flag names); rank-0-only flags count on rank 0 alone."""
    return [int(f.name in raised and (rank == 0 or not f.rank0_only)) for f in FLAGS]


def decide(combined):
    """The decision from the element-wise maximum of every rank's vector."""
    raised = [f for f, v in zip(FLAGS, combined) if v]
    veto = any(f.veto_save for f in raised)
    return Decision(save=not veto and any(f.save for f in raised),
                    stop=any(f.stop for f in raised),
                    reasons=tuple(f.name for f in raised))
