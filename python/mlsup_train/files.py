"""Small file operations whose results a concurrent reader never sees half done."""

import os
import shutil
import socket

# Names this process in temporary names; unique also across hosts that share a file system.
OWNER = f"{socket.gethostname()}.{os.getpid()}"


def fsync_dir(path):
    """Makes a change of the folder's entries (a rename, a new file) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path, data, durable):
    """Writes `data` (str or bytes) into `path` in place, fsynced when `durable`."""
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())


def write_atomic(path, data, durable=False, tag=""):
    """Replaces `path` with `data` whole: a hidden temporary file beside it, then a rename.

    The temporary name starts with a dot (mlsup skips hidden files in a heartbeat folder) and carries
    the host, the process and `tag`, so writers never share one.
    """
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{OWNER}{tag}.tmp")
    try:
        write_file(tmp, data, durable)
        os.replace(tmp, path)
    except BaseException:
        remove_if_exists(tmp)
        raise
    if durable:
        fsync_dir(directory)


def remove_if_exists(path):
    """Deletes a file; a missing one is not an error."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def fsync_tree(root):
    """Fsyncs every file and folder under `root` (the folder itself last)."""
    for folder, _, names in os.walk(root, topdown=False):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        fsync_dir(folder)


def replace_dir(tmp, final):
    """Renames folder `tmp` to `final`; an existing `final` (a leftover) is moved aside and deleted."""
    if not os.path.lexists(final):
        os.rename(tmp, final)
        return
    old = os.path.join(os.path.dirname(final), f".{os.path.basename(final)}.{OWNER}.old")
    shutil.rmtree(old, ignore_errors=True)
    os.rename(final, old)
    os.rename(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
