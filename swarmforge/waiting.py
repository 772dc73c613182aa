"""Waiting for something to happen: ask a condition again and again until it holds or time is up.

Whatever swarmforge waits for (a daemon to start, a process to end, a screen to change)
it waits for by polling, and this is the one loop that does it.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.02) -> bool:
    """Ask `condition` every `interval` seconds until it holds (True) or `timeout` seconds
    have passed (False); it is always asked at least once, even with no time to wait."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True
