"""Resume: what to do with tasks the journal says were running when the orchestrator died.

Command and lead tasks run again (at-least-once). A background worker outlives
the orchestrator and is found again through its report file or its live pid;
a role task through the handoff it was given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.run import roletask, worker
from swarmforge.run.levels import Flight, Level, Task

if TYPE_CHECKING:
    from swarmforge.run.orchestrator import Orchestrator


def last(orch: Orchestrator, task_id: str, field: str) -> object:
    """The latest non-empty `field` of task `task_id`'s task-state events."""
    for event in reversed(orch.journal.events):
        if event.kind == "task-state" and event.id == task_id:
            value = getattr(event, field, None)
            if value is not None:
                return value
    return None


def orphans(orch: Orchestrator, level: Level) -> None:
    """Tasks journaled running whose worker is gone: re-attach or run again."""
    for task_id in level.queue.demote_running():
        task = level.tasks[task_id]
        if task.background and background(orch, level, task_id):
            continue
        if task.role and role(orch, level, task):
            continue
        orch.state(level, task_id, "ready", reason="orphaned: will run again")


def background(orch: Orchestrator, level: Level, task_id: str) -> bool:
    """Find a background task again through its report or its live worker."""
    from swarmforge.swarm.procs import is_alive

    outcome = worker.finished(orch.reports, task_id)
    pid = last(orch, task_id, "pid")
    if outcome is None and not (isinstance(pid, int) and is_alive(pid)):
        return False
    level.start(task_id)
    flight = Flight(
        level, task_id, "background", pid=pid if isinstance(pid, int) else None, launched=True
    )
    orch.fly(flight)
    if outcome is not None:
        orch.done.put((flight, outcome))
    orch.progress(f"re-attached background task {task_id}")
    return True


def role(orch: Orchestrator, level: Level, task: Task) -> bool:
    """Find a role task again through its handoff (delivered again if it was lost)."""
    reason = last(orch, task.id, "reason")
    if not (isinstance(reason, str) and reason.startswith("handoff:")) or not task.role:
        return False
    name = reason.removeprefix("handoff:")
    entry = roletask.role_entry(orch.root, task.role, task.id)
    if roletask.where(entry, name) is None:
        roletask.deliver(entry, name, orch.run_id, task.id, orch.text(task), orch.root)
    level.start(task.id)
    orch.fly(Flight(level, task.id, "role", handoff=name, role=task.role, launched=True))
    return True
