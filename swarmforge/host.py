"""What differs between the operating systems swarmforge runs on.

Each function takes the faster way where this system offers it (`native`, or the
`system` it is told), and a portable one elsewhere; the tests call both ways on Linux
too. One more difference lives with what it serves: the command that keeps a machine
awake while a swarm runs (`proc/awake.py`).
"""

from __future__ import annotations

import os
import sys

# Not typing.TYPE_CHECKING: this module must stay cheap to import (mypy knows the name).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

HAS_PIPE2 = hasattr(os, "pipe2")  # Linux and the BSDs; not macOS
HAS_INOTIFY = sys.platform.startswith("linux")
HAS_PROCFS = sys.platform.startswith("linux")  # /proc/<pid>/stat
# How often a polling observer looks at each directory it watches: a few stats of
# small directories, while the daemon rescans everything every few seconds anyway.
POLL_SECONDS = 0.5


def pipe(*, native: bool = HAS_PIPE2) -> tuple[int, int]:
    """A pipe whose ends are non-blocking and close-on-exec: (read end, write end)."""
    if native:
        return os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    r, w = os.pipe()  # close-on-exec already: Python makes every descriptor so
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    return r, w


def zombie(pid: int, *, native: bool = HAS_PROCFS) -> bool:
    """True if process `pid` has ended and only waits to be reaped; False if it runs or is
    gone."""
    if native:
        try:
            # No pathlib: a helper that finds a draft gone asks this.
            with open(f"/proc/{pid}/stat", "rb") as f:  # noqa: PTH123
                # The state follows the command name, in parentheses that it may contain.
                return f.read().rpartition(b") ")[2][:1] == b"Z"
        except OSError:
            return False
    import psutil  # not at the top: the helpers' start-up path imports this module

    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def observer(*, native: bool = True) -> BaseObserver:
    """A watchdog observer, not yet started: the one watchdog picks for this system
    (FSEvents on macOS, kqueue on the BSDs, inotify on Linux), or one that polls."""
    if native:
        # watchdog falls back to polling by itself where the system offers nothing better.
        from watchdog.observers import Observer

        return Observer()
    from watchdog.observers.polling import PollingObserver

    return PollingObserver(timeout=POLL_SECONDS)
