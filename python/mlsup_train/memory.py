"""Memory thresholds: exit cleanly, with a checkpoint, before a slow leak gets the job killed."""

import dataclasses
import os

# Size suffixes, powers of 1024 (as Slurm's --mem reads them).
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text):
    """Bytes from an int or "512M", "40G", "1.5T" (powers of 1024); None and "" give None."""
    if text is None or isinstance(text, int):
        return text
    s = str(text).strip().lower().removesuffix("b").removesuffix("i")
    if not s:
        return None
    unit = s[-1] if s[-1] in _UNITS and not s[-1].isdigit() else ""
    number = s[: len(s) - len(unit)]
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{text!r} is not a size (say 512M, 40G)") from None
    if value < 0:
        raise ValueError(f"{text!r} is not a size (say 512M, 40G)")
    return int(value * _UNITS[unit])


def rss_bytes(proc="/proc/self/statm"):
    """This process's resident memory in bytes (Linux), or None where it cannot be read."""
    try:
        with open(proc, encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def available_bytes(meminfo="/proc/meminfo"):
    """The node's MemAvailable in bytes, or None where it cannot be read."""
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclasses.dataclass(frozen=True)
class Thresholds:
    """When memory calls for a clean exit: this process's RSS above `rss_limit`, or the node's available
    memory below `available_floor` (bytes; None = not checked). Both None: off (the default)."""

    rss_limit: int = None
    available_floor: int = None

    @classmethod
    def parse(cls, rss_limit=None, available_floor=None):
        """Thresholds from sizes as parse_size reads them."""
        return cls(parse_size(rss_limit), parse_size(available_floor))

    def exceeded(self, rss=rss_bytes, available=available_bytes):
        """Why memory calls for an exit now ("" when it does not, or cannot be read)."""
        if self.rss_limit is not None:
            now = rss()
            if now is not None and now > self.rss_limit:
                return f"resident memory {now >> 20} MiB is over the limit {self.rss_limit >> 20} MiB"
        if self.available_floor is not None:
            now = available()
            if now is not None and now < self.available_floor:
                return f"the node's available memory {now >> 20} MiB is under {self.available_floor >> 20} MiB"
        return ""
