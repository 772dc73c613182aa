"""When the next agent may start: the `[start]` caps of swarmforge.toml.

A swarm of a dozen agents started in one second hits the model provider with a
dozen logins and first requests at once. `up` (tmux) and the headless runner
therefore start agents through a `Ramp`, which allows a start only while

- fewer than `max_parallel` agents are starting. An agent counts as starting for
  START_WINDOW seconds after its start, or until it settles sooner: it said
  something of itself through its hooks or notify program (agents/hints.py), or its
  process exited. Its recorded agent state is no measure: it leaves `starting` as
  soon as the process runs, long before the agent has logged in.
- fewer than `per_minute` agents started in the last 60 seconds (a sliding window).

Exec roles run plain commands, not agents, and are never paced. The logic is pure:
the clock is injected, so tests need no processes and no waiting.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from swarmforge.config.startsettings import StartSettings

START_WINDOW = 10.0  # seconds an agent counts as starting unless it settles sooner


MINUTE = 60.0


POLL = 0.5  # seconds between two looks while waiting for a turn


Clock = Callable[[], float]


Sleep = Callable[[float], None]


class Ramp:
    """The starts of the last minute and the agents still starting, to pace the next start."""

    def __init__(
        self,
        max_parallel: int,
        per_minute: int,
        window: float = START_WINDOW,
        clock: Clock = time.monotonic,
    ) -> None:
        self.max_parallel, self.per_minute, self.window = max_parallel, per_minute, window
        self.clock = clock
        self._recent: deque[float] = deque()  # the times of the starts of the last minute
        self._starting: dict[str, float] = {}  # agents still starting: when each started

    @classmethod
    def of(cls, settings: StartSettings, clock: Clock = time.monotonic) -> Ramp:
        """The ramp that `[start]` describes."""
        return cls(settings.max_parallel, settings.per_minute, clock=clock)

    def _forget(self, now: float) -> None:
        """Drop the starts older than a minute and the agents whose start window ended."""
        while self._recent and self._recent[0] + MINUTE <= now:
            self._recent.popleft()
        for name, at in list(self._starting.items()):
            if at + self.window <= now:
                del self._starting[name]

    def _waits(self, now: float) -> dict[str, float]:
        """Per cap that holds the next start back, the seconds until it lets it go."""
        self._forget(now)
        waits = {}
        if len(self._starting) >= self.max_parallel:
            ends = sorted(at + self.window for at in self._starting.values())
            waits[f"max_parallel {self.max_parallel}"] = ends[-self.max_parallel] - now
        if len(self._recent) >= self.per_minute:
            waits[f"per_minute {self.per_minute}"] = self._recent[-self.per_minute] + MINUTE - now
        return waits

    def delay(self) -> float:
        """Seconds until the next start is allowed; 0 if it is allowed now."""
        return max(self._waits(self.clock()).values(), default=0.0)

    def holding(self) -> str:
        """The cap that holds the next start back longest, as `[start]` names it; "" if none."""
        waits = self._waits(self.clock())
        return max(waits, key=lambda cap: waits[cap]) if waits else ""

    def started(self, name: str) -> None:
        """Count the start of agent `name`, now."""
        now = self.clock()
        self._recent.append(now)
        self._starting[name] = now

    def settled(self, name: str) -> None:
        """Agent `name` is done starting before its window ended: its slot is free."""
        self._starting.pop(name, None)

    def starting(self) -> list[str]:
        """The agents that count as starting, in the order they started."""
        self._forget(self.clock())
        return list(self._starting)


def wait_turn(
    ramp: Ramp,
    sleep: Sleep = time.sleep,
    settled: Callable[[str], bool] = lambda name: False,
    waiting: Callable[[float, str], None] = lambda delay, cap: None,
) -> None:
    """Return once `ramp` allows the next start; `waiting(delay, cap)` is told once if it
    must wait. `settled(name)` says whether a starting agent is done starting already."""
    told = False
    while True:
        for name in ramp.starting():
            if settled(name):
                ramp.settled(name)
        delay = ramp.delay()
        if delay <= 0:
            return
        if not told:
            waiting(delay, ramp.holding())
            told = True
        sleep(min(delay, POLL))
