"""What differs between the operating systems swarmforge runs on, in one place.

Each function takes the faster way where this system offers it (`native`), and
a portable one elsewhere; the tests call both ways on Linux too.
"""

from __future__ import annotations

import os
import resource
import sys

HAS_PIPE2 = hasattr(os, "pipe2")  # Linux and the BSDs; not macOS
HAS_PROC_FDS = os.path.isdir("/proc/self/fd")  # Linux


def pipe(*, native: bool = HAS_PIPE2) -> tuple[int, int]:
    """A pipe whose ends are non-blocking and close-on-exec: (read end, write end)."""
    if native:
        return os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    r, w = os.pipe()  # close-on-exec already: Python makes every descriptor so
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    return r, w


def open_descriptors(*, native: bool = HAS_PROC_FDS) -> int:
    """How many file descriptors this process has open."""
    if native:
        # The count includes the descriptor that reads the directory, as psutil's does.
        return len(os.listdir("/proc/self/fd"))
    import psutil

    return int(psutil.Process().num_fds())


def peak_rss(*, system: str = sys.platform) -> int:
    """The most memory this process has had resident at once, in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if system == "darwin" else peak * 1024  # macOS counts bytes, the rest KiB
