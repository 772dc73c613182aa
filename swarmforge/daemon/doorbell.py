"""The daemon's self-pipe (`Doorbell`): set from any thread or signal handler."""

from __future__ import annotations

import contextlib
import os
import select

from swarmforge import host


class Doorbell:
    """A self-pipe: `set` from any thread or signal handler, `wait` in the main loop.

    A pipe rather than threading.Event: Event.set takes a lock, which a signal
    handler interrupting that same lock's holder would wait on forever.
    """

    def __init__(self) -> None:
        self.r, self.w = host.pipe()

    def set(self) -> None:
        """Wake the waiter."""
        with contextlib.suppress(BlockingIOError):  # a full pipe: the waiter is woken already
            os.write(self.w, b"x")

    def wait(self, timeout: float) -> bool:
        """Sleep until set or `timeout` seconds; True if set. Clears what was set."""
        ready, _, _ = select.select([self.r], [], [], timeout)
        if ready:
            try:
                while os.read(self.r, 4096):
                    pass
            except BlockingIOError:
                pass
        return bool(ready)

    def close(self) -> None:
        """Release the pipe."""
        os.close(self.r)
        os.close(self.w)
