"""The wake-ups the daemon owes roles (`Wakeups`), retried with backoff until sent."""

from __future__ import annotations

import logging

from swarmforge import roletable
from swarmforge.daemon.wake import WakeFailed, Waker
from swarmforge.errors import SwarmforgeError

WAKE_RETRIES = 6
WAKE_BACKOFF = 0.5


class Wakeups:
    """Wake-ups owed to roles, retried with backoff until sent or given up."""

    def __init__(self, waker: Waker, log: logging.Logger) -> None:
        self.waker = waker
        self.log = log
        self.due: dict[str, tuple[float, int]] = {}  # role -> (next attempt, attempts)

    def add(self, role: str) -> None:
        """Owe `role` a wake-up now (coalesced with one already owed)."""
        self.due[role] = (0.0, self.due.get(role, (0.0, 0))[1])

    def next_due(self) -> float | None:
        """When the earliest owed wake-up falls due (monotonic), or None."""
        return min((t for t, _ in self.due.values()), default=None)

    def send(self, roles: dict[str, roletable.RoleEntry], root: str, now: float) -> None:
        """Send every wake-up that is due."""
        for role, (when, attempts) in list(self.due.items()):
            if when > now:
                continue
            entry = roles.get(role)
            try:
                if entry is not None:
                    self.waker.wake(role, entry, root)
                del self.due[role]
            except (WakeFailed, SwarmforgeError, OSError) as exc:
                if attempts + 1 >= WAKE_RETRIES:
                    self.log.error(
                        "giving up waking %s after %d attempts: %s", role, attempts + 1, exc
                    )
                    del self.due[role]
                else:
                    self.log.warning("waking %s failed (%s); retrying", role, exc)
                    self.due[role] = (now + WAKE_BACKOFF * 2**attempts, attempts + 1)
