"""One level of a planned run: the top-level tasks, or the subtasks of one lead."""

from __future__ import annotations

from collections.abc import Sequence

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.run.spec.runspec import Ramp
from swarmforge.run.spec.task import SubtaskSpec
from swarmforge.run.spec.toplevel import TaskSpec
from swarmforge.run.taskgraph import TaskGraph

MAX_DEPTH = 2  # orchestrator (0) -> lead (1) -> worker (2); a worker is a leaf

Task = TaskSpec | SubtaskSpec


def subtasks_of(task: Task) -> list[SubtaskSpec]:
    """The subtasks of a lead (empty for a leaf)."""
    return list(task.subtasks) if isinstance(task, TaskSpec) else []


class Level:
    """The task graph of sibling tasks with its own concurrency limit."""

    def __init__(
        self,
        tasks: Sequence[Task],
        *,
        depth: int,
        limit: int,
        ramp: Ramp | None,
        parent: str | None,
        parked: set[str],
    ) -> None:
        for task in tasks:
            if subtasks_of(task) and depth >= MAX_DEPTH:
                # The schema forbids this already; a run never trusts one check alone.
                raise SwarmforgeError(
                    f"Task '{task.id}' at depth {depth} carries subtasks: "
                    "subtasks cannot have subtasks."
                )
        self.tasks = {t.id: t for t in tasks}
        self.depth = depth
        self.parent = parent
        self.max = limit
        self.ramp = ramp
        self.limit = min(limit, ramp.initial) if ramp else limit
        self.graph = TaskGraph([(t.id, tuple(t.dependsOn), t.id in parked) for t in tasks])
        self.running: set[str] = set()

    def startable(self) -> list[str]:
        """Ready tasks that fit under the concurrency limit now, in spec order."""
        room = self.limit - len(self.running)
        return self.graph.first_ready(room)

    def restore(self, resumed: dict[str, str], checkpoint: str, events: str) -> None:
        """Bring the statuses up to what the journal said (`resumed`, read from the
        `checkpoint` file and the `events` beside it)."""
        known = {task_id: resumed[task_id] for task_id in self.tasks if task_id in resumed}
        if not known:
            return
        try:
            self.graph.restore(known)
        except ValueError as exc:
            # Only a hand-edited checkpoint or journal can contradict the spec like this.
            raise CorruptFile(checkpoint, None, f"{exc} (with {events})") from None

    def decide(self, task_id: str, verdict: str) -> tuple[str, str]:
        """Carry out a person's verdict on parked task `task_id`; its new status and why."""
        if verdict == "rejected":
            self.graph.reject(task_id)
            return "failed", "rejected"
        self.graph.approve(task_id)
        return self.graph.status(task_id), "approved"

    def start(self, task_id: str) -> None:
        """Mark a task running."""
        self.graph.start(task_id)
        self.running.add(task_id)

    def finish(self, task_id: str, ok: bool) -> None:
        """Mark a running task done or failed, and ramp up after a success."""
        self.graph.finish(task_id, ok)
        self.running.discard(task_id)
        if ok and self.ramp:
            self.limit = min(self.max, self.limit + self.ramp.step)

    def stuck(self) -> bool:
        """True when nothing here can move: no ready task and nothing running."""
        return not self.graph.first_ready(1) and not self.running

    def lead_ok(self) -> bool | None:
        """For a finished child level: True if the lead is done, False if failed, None if
        some subtask still waits for a decision (parked)."""
        states = set(self.graph.statuses().values())
        if "failed" in states:
            return False
        # Blocked behind a parked sibling, or parked itself: waiting for a human.
        if states & {"parked", "blocked"}:
            return None
        return True


class Flight:
    """A task whose end the loop is waiting for."""

    def __init__(
        self,
        level: Level,
        task_id: str,
        kind: str,
        pid: int | None = None,
        handoff: str | None = None,
        role: str | None = None,
        launched: bool = False,
    ) -> None:
        self.level, self.task_id, self.kind = level, task_id, kind
        self.pid, self.handoff, self.role = pid, handoff, role
        # False while a claimed task waits for the journal to reach the disk.
        self.launched = launched
