"""The tasks of an open run in flight: claimed, and not yet known to have ended.

Three ways a flight ends: a command task through the spawner; a worker thread, a
worker on another host or a report found at resume through the `done` queue; a
background or role task out of the run's sight (`outside`, looked for by external.py).
Held flights are claimed but wait for the journal to be durable up to their claim
before they start (dispatch.py).
"""

from __future__ import annotations

import queue

from swarmforge.run.external import Ended
from swarmforge.run.levels import Flight


class Flights:
    """The claimed tasks whose end the dispatch loop waits for, and the held ones among them."""

    def __init__(self) -> None:
        self.flying: dict[str, Flight] = {}
        self.outside: dict[str, Flight] = {}  # the background and role ones among them
        # Claimed tasks waiting for the journal to be durable up to a seq before they start.
        self.held: list[tuple[int, Flight]] = []
        # Tasks that ended out of the loop's thread (worker threads, re-attached reports).
        self.done: queue.Queue[Ended] = queue.Queue()

    def fly(self, flight: Flight) -> None:
        """Wait for the end of a claimed task."""
        self.flying[flight.task_id] = flight
        if flight.kind in ("background", "role"):
            self.outside[flight.task_id] = flight

    def land(self, task_id: str) -> None:
        """Stop waiting for task `task_id`: it ended."""
        self.flying.pop(task_id, None)
        self.outside.pop(task_id, None)

    def hold(self, seq: int, flight: Flight) -> None:
        """Keep `flight` from starting until the journal is durable up to `seq`."""
        self.held.append((seq, flight))

    def holding(self) -> bool:
        """True while a claimed task waits for the disk (safe from the committer's thread)."""
        return bool(self.held)

    def due(self, durable: int) -> list[Flight]:
        """The held flights that may start now the journal is durable up to `durable`."""
        if not self.held:
            return []
        ready = [flight for seq, flight in self.held if seq <= durable]
        self.held = [(seq, flight) for seq, flight in self.held if seq > durable]
        return ready
