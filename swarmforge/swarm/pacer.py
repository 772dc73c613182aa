"""The agents of one session started through a `Ramp`, each settling early as its files say.

A `Pacer` paces the starts of `up` (tmux) and of the headless runner; `follow` tells,
while `up` waits, how far the headless runner's own pacing got.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from swarmforge import times
from swarmforge.agents import hints, lifecycle
from swarmforge.config.startsettings import StartSettings
from swarmforge.swarm.ramp import Clock, Ramp, Sleep, wait_turn

FOLLOW_POLL = 0.2  # seconds between two looks at the headless runner's starts


def progress_line(started: int, total: int, delay: float, cap: str) -> str:
    """What `up` says while it waits: `started 3 of 12 agents; next in 7 s (per_minute 6)`."""
    return f"started {started} of {total} agents; next in {math.ceil(delay)} s ({cap})"


def agent_settled(root: str, run_id: str, role: str, since: float) -> bool:
    """True if `role`'s agent, started at `since` (epoch seconds), is done starting: it
    said something of itself since, or its process has exited since."""
    hint = hints.read_hint(root, role)
    if hint is not None and hint.at >= since:
        return True
    life = lifecycle.load(root, role, run_id)
    if life is None or life.state != "exited" or life.exited_at is None:
        return False
    # The record keeps whole seconds: an exit in the second of the start counts.
    return times.parse(life.exited_at) >= math.floor(since)


def _quiet(message: str) -> None:
    pass


class Pacer:
    """The agents of one run started through a `Ramp`, each settling early as its files say."""

    def __init__(
        self,
        root: str,
        run_id: str,
        settings: StartSettings,
        total: int = 0,
        progress: Callable[[str], None] = _quiet,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.root, self.run_id, self.total, self.progress = root, run_id, total, progress
        self.ramp = Ramp.of(settings, clock)
        self.sleep = sleep
        self.count = 0  # the starts so far
        self._since: dict[str, float] = {}  # each agent's last start, epoch seconds

    def _settled(self, name: str) -> bool:
        return agent_settled(self.root, self.run_id, name, self._since[name])

    def _tell(self, delay: float, cap: str) -> None:
        self.progress(progress_line(self.count, self.total, delay, cap))

    def ready(self) -> bool:
        """True if an agent may start now (never waits)."""
        for name in self.ramp.starting():
            if self._settled(name):
                self.ramp.settled(name)
        return self.ramp.delay() <= 0

    def wait(self) -> None:
        """Return once an agent may start, saying how long that takes if it must wait."""
        wait_turn(self.ramp, self.sleep, self._settled, self._tell)

    def started(self, name: str) -> None:
        """Count a start of agent `name`, now."""
        self.ramp.started(name)
        self._since[name] = time.time()
        self.count += 1

    def has_started(self, name: str) -> bool:
        """True if a start of agent `name` was counted."""
        return name in self._since

    def tell_next(self) -> None:
        """Say when the next agent may start, if it must wait."""
        if self.count < self.total and not self.ready():
            self._tell(self.ramp.delay(), self.ramp.holding())


def follow(
    root: str,
    run_id: str,
    agents: list[str],
    settings: StartSettings,
    since: float,
    alive: Callable[[], bool],
    progress: Callable[[str], None],
) -> None:
    """Tell the progress of the headless runner's ramp until every agent of `agents` has
    started since `since` (epoch seconds) or `alive()` says the runner is gone.

    The runner paces the starts itself; this only watches the agents' lifecycle records,
    and estimates the next start with a ramp of its own that counts each start when seen.
    """
    pacer = Pacer(root, run_id, settings, len(agents), progress)
    while pacer.count < len(agents) and alive():
        before = pacer.count
        for name in agents:
            life = lifecycle.load(root, name, run_id)
            seen = life is not None and times.parse(life.started_at) >= math.floor(since)
            if seen and not pacer.has_started(name):
                pacer.started(name)
        if pacer.count > before:
            pacer.tell_next()
        if pacer.count < len(agents):
            time.sleep(FOLLOW_POLL)
