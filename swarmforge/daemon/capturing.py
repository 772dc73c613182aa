"""The daemon's captures of each role's work (`Capturer`), in a thread beside delivery.

A role is captured when it sent or received a handoff, and every `every` seconds
(`[captures]` of swarmforge.toml) whatever happened: a capture that would equal the
role's last is not made, so an idle worktree costs one look. Delivery never waits
for a capture: the daemon only notes who to capture, and one thread at a time takes
the captures, then prunes the old ones.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping

from swarmforge.errors import SwarmforgeError
from swarmforge.git import captures

SETTLE = 1.0  # seconds without a delivery before the captures it asked for are taken


class Capturer:
    """Captures of the roles named to it, and of every role on a timer, in the background."""

    def __init__(
        self,
        root: str,
        log: logging.Logger,
        worktrees: Callable[[], Mapping[str, str]],
        every: float,
        keep: int,
        keep_for: float,
    ) -> None:
        self.root = root
        self.log = log
        self.worktrees = worktrees  # role -> its worktree, as the daemon knows them now
        self.every, self.keep, self.keep_for = every, keep, keep_for
        self._due = time.monotonic() + every if every else float("inf")
        self._wanted: dict[str, str] = {}  # role -> why it is to be captured
        self._settled = 0.0  # when the last delivery is SETTLE seconds old
        self._thread: threading.Thread | None = None

    def note(self, roles: Iterable[str], trigger: str) -> None:
        """Capture `roles` soon, for `trigger`."""
        roles = list(roles)
        if roles:
            self._settled = time.monotonic() + SETTLE
        for role in roles:
            before = self._wanted.get(role)
            if before is None or trigger in before.split(", "):
                self._wanted[role] = before or trigger
            else:
                self._wanted[role] = f"{before}, {trigger}"  # one capture for both

    def poll(self) -> None:
        """Start the captures due, unless some are under way; never raises, never waits."""
        try:
            if self._thread is not None and self._thread.is_alive():
                return
            now = time.monotonic()
            if now < self._settled:
                return  # deliveries are under way: capture once they pause
            wanted, self._wanted = self._wanted, {}
            if now >= self._due:
                self._due = now + self.every
                for role in self.worktrees():
                    wanted.setdefault(role, "timer")
            if not wanted:
                return
            paths = self.worktrees()
            jobs = [(role, paths[role], why) for role, why in wanted.items() if role in paths]
            self._thread = threading.Thread(
                target=self._take, args=(jobs,), name="captures", daemon=True
            )
            self._thread.start()
        except Exception:
            self.log.exception("captures not started")

    def next_due(self) -> float | None:
        """When `poll` next has captures to start (time.monotonic()), if it has any."""
        if self._wanted:
            return self._settled
        return self._due if self._due != float("inf") else None

    def finish(self, timeout: float = 30.0) -> None:
        """Take the captures still wanted and let them finish (the daemon does, before it
        exits)."""
        if self._thread is not None:
            self._thread.join(timeout)
        if self._wanted:
            self._settled = 0.0
            self.poll()
            if self._thread is not None:
                self._thread.join(timeout)

    def _take(self, jobs: list[tuple[str, str, str]]) -> None:
        for role, worktree, trigger in jobs:
            try:
                captures.take_logged(self.root, role, worktree, trigger)
            except (SwarmforgeError, OSError) as exc:
                self.log.warning("capture of %s failed: %s", role, exc)
            except Exception:
                self.log.exception("capture of %s failed", role)
        try:
            captures.prune(self.root, self.keep, self.keep_for)
        except (SwarmforgeError, OSError) as exc:
            self.log.warning("old captures not pruned: %s", exc)
