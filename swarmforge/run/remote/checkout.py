"""Where a task runs on a worker: a worktree of its own if it is isolated, else the scratch
checkout of its run, both at the run's base commit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from swarmforge.errors import SwarmforgeError
from swarmforge.git.isolation import Isolation
from swarmforge.run.remote.clone import Clone
from swarmforge.run.remote.messages import TaskMessage


@contextmanager
def checkout(
    clone: Clone, task: TaskMessage, say: Callable[[str], None]
) -> Iterator[tuple[str | None, Isolation | None, str]]:
    """Where the task runs and its worktree, or (None, None, why) when it cannot be made."""
    stack = ExitStack()
    try:
        clone.fetch_base(task.runId, task.base)
        if task.isolate:
            iso = stack.enter_context(clone.isolated(task.runId, task.taskId, task.base, task.port))
            where: tuple[str | None, Isolation | None, str] = (iso.path, iso, "")
        else:
            where = (clone.scratch(task.runId, task.base), None, "")
    except SwarmforgeError as exc:
        stack.close()
        where = (None, None, exc.message)
    try:
        yield where
    finally:
        try:
            stack.close()
        except SwarmforgeError as exc:  # reported already: only the clone is untidy
            say(f"cannot remove the worktree of {task.taskId}: {exc.message}")
