"""What a run checks before anything of it is journaled: worktrees for its isolated tasks,
roles for its role tasks."""

from __future__ import annotations

from swarmforge.run import roletask
from swarmforge.run.levels import Task


def preflight(root: str, run_id: str, tasks: list[Task]) -> None:
    """Fail closed before anything is journaled: isolation needs worktrees, role tasks
    need their role."""
    from swarmforge.git.isolation import require_worktrees

    for task in tasks:
        if task.isolate:
            require_worktrees(root, run_id, task.id)
        if task.role:
            roletask.role_entry(root, task.role, task.id)
