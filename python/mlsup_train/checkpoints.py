"""Checkpoint folders as mlsup's layouts name them, saved so that a reader never takes a partial one.

A save writes into a hidden temporary folder beside the final one (mlsup skips hidden names and names
with "saving"), puts the layout's proof of completeness in last (the complete marker, hf's
trainer_state.json), makes it durable, renames it into place, and then points the layout's pointer
file at it (megatron, deepspeed): whichever rule mlsup applies, the checkpoint is complete from the
moment it is visible.
"""

import dataclasses
import json
import os
import shutil

from . import files

DEFAULT_MARKER = "COMPLETE"


@dataclasses.dataclass(frozen=True)
class Layout:
    """How one framework names its checkpoint folders and proves a save finished."""

    folder_format: str   # the folder of a step, str.format with `step`
    pointer_file: str    # names the newest complete checkpoint; "" = none
    pointer_format: str  # the pointer's content, str.format with `step`
    last_file: str       # the file the framework writes into a checkpoint last; "" = none

    def folder(self, step):
        """The folder name of the checkpoint of `step`."""
        return self.folder_format.format(step=step)


# mlsup's layouts (supervisor/checkpoint/checkpoints.cpp), with the names their frameworks write.
LAYOUTS = {
    "megatron": Layout("iter_{step:07d}", "latest_checkpointed_iteration.txt", "{step}", ""),
    "deepspeed": Layout("global_step{step}", "latest", "global_step{step}", ""),
    "hf": Layout("checkpoint-{step}", "", "", "trainer_state.json"),
    "glob": Layout("step_{step}", "", "", ""),
}


def layout_of(name):
    """The layout called `name`; a ValueError names the known ones."""
    try:
        return LAYOUTS[name]
    except KeyError:
        raise ValueError(f"checkpoint layout {name!r} is not one of {', '.join(LAYOUTS)}") from None


class Save:
    """One checkpoint being saved: `dir` is the temporary folder to write into (None on a rank that does not
    write), `path` the final folder; `committed` tells, after the save, whether it was put in place."""

    def __init__(self, checkpoint_dir, step, layout, marker, writer, folder=None, attempt=0):
        self.step = int(step)
        self.layout = layout
        self.marker = marker
        self.writer = writer
        name = folder or layout.folder(self.step)
        if name.startswith(".") or os.sep in name:
            raise ValueError(f"checkpoint folder name {name!r} must be a plain name that does not start with a dot")
        self.checkpoint_dir = checkpoint_dir
        self.path = os.path.join(checkpoint_dir, name)
        # The same on every rank (ranks that write shards write into one folder), another in another attempt
        # (one mlsup gave up on may still be saving); hidden, and says "saving".
        self.tmp = os.path.join(checkpoint_dir, f".{name}.attempt{attempt}.saving")
        self.dir = None
        self.committed = False

    def prepare(self):
        """The writer clears a leftover temporary folder and creates an empty one."""
        if not self.writer:
            return
        os.makedirs(self.checkpoint_dir, exist_ok=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.tmp)

    def open(self, all_ranks):
        """Hands out the temporary folder: to every rank with `all_ranks`, else to the writer only."""
        self.dir = self.tmp if (all_ranks or self.writer) else None

    def commit(self):
        """The writer proves the save complete, makes it durable, renames it into place, then points at it."""
        if not self.writer:
            return
        self._write_proof()
        files.fsync_tree(self.tmp)
        files.replace_dir(self.tmp, self.path)
        files.fsync_dir(self.checkpoint_dir)
        if self.layout.pointer_file:
            pointer = os.path.join(self.checkpoint_dir, self.layout.pointer_file)
            files.write_atomic(pointer, self.layout.pointer_format.format(step=self.step) + "\n", durable=True)
        self.committed = True

    def discard(self):
        """Deletes the temporary folder (a save that failed or must not finish)."""
        if self.writer:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _write_proof(self):
        """The layout's last file (when the training did not write it), then the marker: the last writes."""
        last = self.layout.last_file
        if last and not os.path.exists(os.path.join(self.tmp, last)):
            text = json.dumps({"global_step": self.step}) + "\n"
            files.write_file(os.path.join(self.tmp, last), text, durable=False)
        if self.marker:
            files.write_file(os.path.join(self.tmp, self.marker), f"{self.step}\n", durable=False)
