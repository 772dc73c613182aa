"""The task tree of an open run: its levels, each made when its lead starts, and every
task's status across them.

A level is made once in each life of the run: the new tasks that wait for a human are
parked in the ledger, the statuses brought up to what the journal said, and the
decisions humans took since carried out. This module changes only its own levels and
says what became of their tasks; the dispatch journals it (dispatch.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from swarmforge.run.journal.checkpoint import CHECKPOINT
from swarmforge.run.journal.file import EVENTS, Journal
from swarmforge.run.levels import Level, Task
from swarmforge.run.parking import ledgers, rules
from swarmforge.run.parking.decisions import decisions
from swarmforge.run.spec.runspec import Ramp


@dataclass(frozen=True)
class Grown:
    """A level just made, and what became of its tasks, in the order to journal it."""

    level: Level
    parked: dict[str, str]  # the tasks parked just now, and why
    enqueued: list[tuple[str, str]]  # the tasks new to the journal, and their status
    decided: list[tuple[str, str, str]]  # parked tasks a human decided on: status, why


class TaskTree:
    """The levels of an open run: the top-level tasks, and the subtasks of each lead."""

    def __init__(
        self,
        run_dir: str,
        resumed: dict[str, str],
        journal: Journal,
        *,
        limit: int,
        ramp: Ramp | None,
    ) -> None:
        self.dir = run_dir
        self.resumed = resumed  # every task's status as the journal left it
        self.journal = journal
        self.limit = limit
        self.ramp = ramp
        self.levels: list[Level] = []
        self.children: dict[str, Level] = {}  # the subtasks of each lead not finished yet

    def states(self) -> dict[str, str]:
        """Every task's status: those of live levels over what the journal said."""
        merged = dict(self.resumed)
        for level in self.levels:
            merged.update(level.graph.statuses())
        return merged

    def grow(self, tasks: Sequence[Task], depth: int, parent: str | None) -> Grown:
        """Make the level of `tasks` (the subtasks of lead `parent`, if any), brought up to
        date with the journal and the decisions taken since."""
        waiting, parked = self._park(tasks)
        level = Level(
            tasks, depth=depth, limit=self.limit, ramp=self.ramp, parent=parent, parked=waiting
        )
        enqueued = [
            (task.id, level.graph.status(task.id))
            for task in tasks
            if not self.journal.was_enqueued(task.id)
        ]
        level.restore(self.resumed, str(Path(self.dir) / CHECKPOINT), EVENTS)
        self.levels.append(level)
        decided = self._carry_out_decisions(level)
        if parent is not None:
            self.children[parent] = level
        return Grown(level, parked, enqueued, decided)

    def _park(self, tasks: Sequence[Task]) -> tuple[set[str], dict[str, str]]:
        """The ids among `tasks` that wait for a decision, and the new ones among them,
        parked in the ledger just now, with why."""
        waiting = rules.waiting(tasks, ledgers.approved(self.dir))
        known = ledgers.parked(self.dir)
        new: dict[str, str] = {
            task_id: reason for task_id, reason in waiting.items() if task_id not in known
        }
        for task_id, reason in new.items():
            ledgers.park(self.dir, task_id, reason)
        return set(waiting), new

    def _carry_out_decisions(self, level: Level) -> list[tuple[str, str, str]]:
        """Let run the parked tasks a human approved since, and fail the rejected ones."""
        approved, rejected = ledgers.approved(self.dir), ledgers.rejected(self.dir)
        return [
            (decision.task_id, *level.decide(decision.task_id, decision.verdict))
            for decision in decisions(level.graph.statuses(), approved, rejected)
        ]

    def finish_leads(self) -> list[tuple[str, bool]]:
        """Finish each lead whose subtasks can move no further; the leads and whether done."""
        finished = []
        for lead, child in list(self.children.items()):
            if not child.stuck():
                continue
            ok = child.lead_ok()
            if ok is None:
                continue  # a subtask waits for approval: the lead waits with it
            parent = next(lv for lv in self.levels if lead in lv.tasks)
            parent.finish(lead, ok)
            del self.children[lead]
            finished.append((lead, ok))
        return finished
