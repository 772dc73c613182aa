"""Whether a process runs: it exists and has not ended."""

from __future__ import annotations

import os

from swarmforge import host


def is_alive(pid: int | None) -> bool:
    """True if process `pid` runs: it exists and is not a zombie (one that has ended and
    only waits to be reaped, its files closed)."""
    if pid is None or pid <= 0:
        return False  # 0 and negative pids name process groups to os.kill
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process
    return not host.zombie(pid)
