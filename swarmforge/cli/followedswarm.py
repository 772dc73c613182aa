"""The swarm `events --follow` follows, and when it has stopped: its `swarm-down` event, or
its session record no longer running, for long enough."""

from __future__ import annotations

import time

CHECK = 1.0  # seconds between looks at whether the followed swarm still runs
# How long a swarm whose processes are gone is still followed for its `swarm-down`:
# `down` ends the processes first and records the event after.
GRACE = 5.0


class Swarm:
    """The swarm `--follow` follows, and whether it still runs."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.run_id = self._running()
        self.checked = time.monotonic()
        self.gone_at: float | None = None  # when its processes were first seen gone

    def _running(self) -> str | None:
        from swarmforge.config import sessionrecord
        from swarmforge.swarm.teardown import is_running

        record = sessionrecord.load(self.root)
        if record is None or record.state != "running" or not is_running(self.root, record):
            return None
        return record.run_id

    def ended(self, seen: list[dict[str, object]]) -> bool:
        """True once the swarm has stopped: its swarm-down is among `seen`, or it has been
        gone for GRACE seconds without one (a killed runner writes none)."""
        if any(e.get("kind") == "swarm-down" and e.get("run_id") == self.run_id for e in seen):
            # A session stopped and resumed since keeps its run id: only a swarm that no
            # longer runs has stopped for good.
            self.checked = time.monotonic()
            if self._running() != self.run_id:
                return True
        now = time.monotonic()
        if self.gone_at is not None:
            return now - self.gone_at >= GRACE
        if now - self.checked < CHECK:
            return False
        self.checked = now
        if self._running() != self.run_id:
            self.gone_at = now
        return False
