"""Plays each role's scripted turns to its agent, and checks what each turn must show.

The scripted model hands every main-loop request to `Director.decide`. A request
that ends in a user message opens the role's next turn; one that carries a tool
result continues it. The turn's commands go out one per request; after the last
result comes back the turn's expectations are checked against the role's
mailbox and the commands' output, and the turn's closing text ends it.
"""

from __future__ import annotations

import threading
import time

from swarmforge.rehearse.script import Script
from swarmforge.rehearse.stage import UNSCRIPTED, Stage
from swarmforge.rehearse.wire import Exchange, Reply


class Director:
    """The scripted side of every role's conversation; safe to call from many threads."""

    def __init__(self, script: Script, worktrees: dict[str, str]) -> None:
        self.stages = {
            role: Stage(role, list(part.turns), worktrees[role])
            for role, part in script.roles.items()
        }
        self._lock = threading.Lock()

    def decide(self, exchange: Exchange) -> Reply:
        """The model's answer to one request of a role's agent."""
        with self._lock:
            stage = self.stages.get(exchange.role)
            if stage is None:
                return Reply(text=UNSCRIPTED)
            if exchange.new_turn:
                return stage.open(exchange.user_text)
            return stage.carry_on(exchange.tool_output or "", exchange.running)

    def finished(self) -> bool:
        """True once every role has played all its turns."""
        with self._lock:
            return all(stage.done() for stage in self.stages.values())

    def failed(self) -> bool:
        """True once a turn has ended with an expectation that did not hold."""
        with self._lock:
            return any(p.problems for stage in self.stages.values() for p in stage.played)

    def progress(self) -> dict[str, str]:
        """One line per role: how far it got."""
        with self._lock:
            out = {}
            for role, stage in self.stages.items():
                ended = sum(p.finished for p in stage.played)
                doing = stage.current
                where = f", in turn {doing.number}" if doing else ""
                out[role] = f"{ended}/{len(stage.turns)} turns played{where}"
            return out

    def stalled(self, limit: float) -> list[tuple[str, int, str]]:
        """(role, turn, command) of every role whose command's result is `limit` seconds late."""
        now = time.monotonic()
        with self._lock:
            late = []
            for role, stage in self.stages.items():
                turn = stage.current
                since = stage.waiting_since
                if turn is not None and since is not None and now - since > limit:
                    late.append((role, turn.number, turn.commands[-1]))
            return late

    def problems(self) -> list[str]:
        """Every expectation that did not hold, and every turn that was never played."""
        with self._lock:
            found = []
            for role, stage in self.stages.items():
                for turn in stage.played:
                    found += turn.problems
                    if not turn.finished:
                        found.append(f"role {role}, turn {turn.number}: did not finish")
                for number in range(len(stage.played) + 1, len(stage.turns) + 1):
                    found.append(f"role {role}, turn {number}: never began")
            return found
