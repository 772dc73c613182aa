"""The task graph of one level of a run: each task's status, the dependency edges that gate
it, and the only moves between statuses. Pure bookkeeping, no I/O.

A task is ready only when every task it depends on is done; `failed` never satisfies an
edge, so whatever depends on a failed task stays blocked. done and failed are final.
Statuses and moves::

    blocked --(every dependency done)--> ready --start--> running --finish--> done | failed
    parked --approve--> ready | blocked          parked --reject--> failed
    running --demote_running--> ready            (resume: run an orphan again)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from typing import Literal, get_args

Status = Literal["blocked", "ready", "running", "done", "failed", "parked"]
STATUSES: tuple[Status, ...] = get_args(Status)
TERMINAL = frozenset({"done", "failed"})
# A task with one of these statuses has, by construction, every dependency done.
_GATED = frozenset({"ready", "running", "done"})


class TaskGraph:
    """The statuses of sibling tasks and the only moves between them.

    Unknown task ids raise KeyError; a move the status does not allow raises ValueError.
    A dependency cycle (refused by the spec) would simply leave its tasks blocked.
    """

    def __init__(self, tasks: Iterable[tuple[str, tuple[str, ...], bool]]) -> None:
        self._deps: dict[str, tuple[str, ...]] = {}
        self._status: dict[str, str] = {}
        self._order: dict[str, int] = {}
        for task_id, depends_on, parked in tasks:
            if task_id in self._deps:
                raise ValueError(f"duplicate task id '{task_id}'")
            self._deps[task_id] = tuple(depends_on)
            self._order[task_id] = len(self._order)
            self._status[task_id] = "parked" if parked else "blocked" if depends_on else "ready"
        self._ids = list(self._order)
        # The positions of the ready tasks, kept sorted: the loop asks for the first few
        # ready tasks after every move, and a scan of every status would cost O(tasks).
        self._ready = [i for i, status in enumerate(self._status.values()) if status == "ready"]
        self._dependents: dict[str, list[str]] = {task_id: [] for task_id in self._deps}
        for task_id, deps in self._deps.items():
            for dep in deps:
                if dep == task_id or dep not in self._deps:
                    raise ValueError(f"task '{task_id}' cannot depend on '{dep}'")
                self._dependents[dep].append(task_id)

    def status(self, task_id: str) -> str:
        """The status of one task."""
        if task_id not in self._status:
            raise KeyError(f"unknown task '{task_id}'")
        return self._status[task_id]

    def depends_on(self, task_id: str) -> tuple[str, ...]:
        """The ids a task waits for."""
        self.status(task_id)
        return self._deps[task_id]

    def statuses(self) -> dict[str, str]:
        """Every task's status, in task order."""
        return dict(self._status)

    def ready(self) -> list[str]:
        """The ready tasks, in task order (the order is the priority)."""
        return [self._ids[i] for i in self._ready]

    def first_ready(self, count: int) -> list[str]:
        """The first `count` ready tasks, in task order."""
        return [self._ids[i] for i in self._ready[: max(count, 0)]]

    def counts(self) -> dict[str, int]:
        """How many tasks have each status (every status, zeros included)."""
        counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
        for status in self._status.values():
            counts[status] += 1
        return counts

    def finished(self) -> bool:
        """True when nothing can move on its own: no task is ready or running."""
        return not any(status in ("ready", "running") for status in self._status.values())

    def start(self, task_id: str) -> None:
        """ready -> running."""
        self._move(task_id, "ready", "running", "start")

    def finish(self, task_id: str, ok: bool) -> None:
        """running -> done (ok) or failed; a done task unblocks what waited only for it."""
        self._move(task_id, "running", "done" if ok else "failed", "finish")
        if ok:
            self._promote(self._dependents[task_id])

    def approve(self, task_id: str) -> None:
        """parked -> ready, or blocked while a dependency is not done yet."""
        self._move(task_id, "parked", "blocked", "approve")
        self._promote([task_id])

    def reject(self, task_id: str) -> None:
        """parked -> failed, for good."""
        self._move(task_id, "parked", "failed", "reject")

    def demote_running(self) -> list[str]:
        """running -> ready for every running task (its worker is gone); returns their ids."""
        orphans = [task_id for task_id, status in self._status.items() if status == "running"]
        for task_id in orphans:
            self._set(task_id, "ready")
        return orphans

    def restore(self, states: Mapping[str, str]) -> None:
        """Take statuses from a journal or checkpoint, all or nothing, then unblock what can run."""
        merged = dict(self._status)
        for task_id, status in states.items():
            if task_id not in merged:
                raise ValueError(f"cannot restore unknown task '{task_id}'")
            if status not in STATUSES:
                raise ValueError(f"cannot restore task '{task_id}': unknown status '{status}'")
            if merged[task_id] in TERMINAL and status != merged[task_id]:
                raise ValueError(f"cannot restore task '{task_id}': it is {merged[task_id]}")
            merged[task_id] = status
        for task_id, status in merged.items():
            waiting = [dep for dep in self._deps[task_id] if merged[dep] != "done"]
            if status in _GATED and waiting:
                # A gate that was never open: the record contradicts itself, so trust none of it.
                raise ValueError(
                    f"cannot restore task '{task_id}' as {status}: "
                    f"its dependency '{waiting[0]}' is {merged[waiting[0]]}"
                )
        self._status = merged
        self._ready = [i for i, status in enumerate(merged.values()) if status == "ready"]
        self._promote(list(merged))

    def _gate_open(self, task_id: str) -> bool:
        return all(self._status[dep] == "done" for dep in self._deps[task_id])

    def _promote(self, candidates: Iterable[str]) -> None:
        for task_id in candidates:
            if self._status[task_id] == "blocked" and self._gate_open(task_id):
                self._set(task_id, "ready")

    def _set(self, task_id: str, target: str) -> None:
        """The one place a status changes, keeping the ready index in step."""
        was = self._status[task_id]
        self._status[task_id] = target
        if was == "ready" and target != "ready":
            i = self._order[task_id]
            del self._ready[bisect.bisect_left(self._ready, i)]
        elif target == "ready" and was != "ready":
            bisect.insort(self._ready, self._order[task_id])

    def _move(self, task_id: str, source: str, target: str, verb: str) -> None:
        current = self.status(task_id)
        if current in TERMINAL:
            raise ValueError(f"cannot {verb} task '{task_id}': it is {current}, and that is final")
        if current != source:
            raise ValueError(f"cannot {verb} task '{task_id}': it is {current}, not {source}")
        self._set(task_id, target)
