"""Checks across the tasks of a spec's tree: unique ids, dependencies between siblings only,
and no dependency cycle."""

from __future__ import annotations

from collections.abc import Sequence

from swarmforge.run.spec.task import TaskFields
from swarmforge.run.spec.toplevel import TaskSpec


def check_unique(tasks: Sequence[TaskSpec]) -> None:
    """ValueError naming both places when two tasks of the tree share an id."""
    places: dict[str, str] = {}
    for i, task in enumerate(tasks):
        tree = [(task.id, f"tasks[{i}]")]
        tree += [(sub.id, f"tasks[{i}].subtasks[{j}]") for j, sub in enumerate(task.subtasks)]
        for task_id, place in tree:
            first = places.setdefault(task_id, place)
            if first != place:
                raise ValueError(f"duplicate task id '{task_id}': {first} and {place}")


def _find_cycle(deps: dict[str, list[str]]) -> list[str] | None:
    """One dependency cycle as a closed path (`a, b, a`), or None; iterative, for long chains."""
    state: dict[str, str] = {}
    for root in deps:
        if root in state:
            continue
        path, todo, state[root] = [root], [iter(deps[root])], "open"
        while todo:
            dep = next(todo[-1], None)
            if dep is None:
                state[path.pop()] = "closed"
                todo.pop()
            elif state.get(dep) == "open":
                return [*path[path.index(dep) :], dep]
            elif dep not in state:
                path.append(dep)
                todo.append(iter(deps[dep]))
                state[dep] = "open"
    return None


def check_level(siblings: Sequence[TaskFields], everyone: set[str], level: str) -> None:
    """ValueError when a task of `siblings` depends on itself, on a task that is not one of
    them, or on a cycle."""
    names = {task.id for task in siblings}
    for task in siblings:
        for dep in task.dependsOn:
            if dep == task.id:
                raise ValueError(f"task '{task.id}' depends on itself")
            if dep in everyone and dep not in names:
                raise ValueError(
                    f"task '{task.id}' depends on '{dep}', which is not one of the {level}: "
                    "dependsOn names siblings only"
                )
            if dep not in names:
                raise ValueError(f"task '{task.id}' depends on unknown task '{dep}'")
    cycle = _find_cycle({task.id: task.dependsOn for task in siblings})
    if cycle:
        raise ValueError(f"dependency cycle: {' -> '.join(cycle)}")
