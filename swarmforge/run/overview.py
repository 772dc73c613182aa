"""The project's planned runs as a view shows them: each task's state, what it waits on, why
it is parked. Read only: a torn journal tail is skipped here, never cut.

The dependencies come from the copy of the spec a run keeps (`spec.json`, written when the
run starts); a run begun by an older version has none, and its tasks are listed without
their edges.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from swarmforge import filewrite, statedir
from swarmforge.layout import RUNS_DIR
from swarmforge.run.journal.events import TaskEnqueued, TaskState
from swarmforge.run.journal.replay import read_states
from swarmforge.run.parking import ledgers

SPEC = "spec.json"  # the run's own copy of its spec, in canonical JSON


@dataclass(frozen=True)
class TaskView:
    """One task of a run."""

    id: str
    status: str
    parent: str | None = None  # the lead task of a subtask
    depends_on: list[str] = field(default_factory=list)
    reason: str | None = None  # why it failed, was skipped or is parked
    parked: str | None = None  # the park reason, while it waits for `swarmforge approve`


@dataclass(frozen=True)
class RunView:
    """One planned run."""

    run_id: str
    goal: str | None
    finished: bool
    counts: dict[str, int]
    events: int
    tasks: list[TaskView]

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def keep_spec(run_dir: str, spec_json: str) -> None:
    """Keep the run's spec beside its journal, once, for views of its tasks and edges."""
    kept = Path(run_dir) / SPEC
    if not kept.exists():
        filewrite.atomic_write(str(kept), spec_json.encode(), durable=False)


def run_dirs(root: str) -> list[str]:
    """The directories of the project's runs, by name."""
    base = Path(statedir.path(root, RUNS_DIR))
    found = sorted(base.iterdir()) if base.is_dir() else []
    return [str(d) for d in found if d.is_dir()]


def runs(root: str) -> list[RunView]:
    """Every planned run of the project at `root`."""
    return [run(d) for d in run_dirs(root)]


def run(run_dir: str) -> RunView:
    """The run kept in `run_dir`."""
    states, events = read_states(run_dir)
    started = next((e for e in events if e.kind == "run-started"), None)
    kinds = [e.kind for e in events]
    opens = [i for i, k in enumerate(kinds) if k in ("run-started", "run-resumed")]
    opened = opens[-1] if opens else -1
    parents: dict[str, str | None] = {}
    reasons: dict[str, str | None] = {}
    for event in events:
        if isinstance(event, TaskEnqueued):
            parents.setdefault(event.id, event.parent)
        elif isinstance(event, TaskState):
            reasons[event.id] = event.reason
    edges = _edges(run_dir)
    parked: dict[str, str] = dict(ledgers.parked(run_dir))
    waiting = {t for t, s in states.items() if s == "parked"}
    order = list(edges) + [t for t in states if t not in edges]
    counts: dict[str, int] = {}
    for status in states.values():
        counts[status] = counts.get(status, 0) + 1
    tasks = [
        TaskView(
            id=task,
            status=states.get(task, "pending"),
            parent=parents.get(task),
            depends_on=edges.get(task, []),
            reason=reasons.get(task),
            parked=parked.get(task) if task in waiting else None,
        )
        for task in order
    ]
    return RunView(
        run_id=Path(run_dir).name,
        goal=getattr(started, "goal", None),
        finished="run-finished" in kinds[opened + 1 :],
        counts=counts,
        events=len(events),
        tasks=tasks,
    )


def _edges(run_dir: str) -> dict[str, list[str]]:
    """Each task of the run's spec copy with what it depends on, leads before subtasks."""
    try:
        with (Path(run_dir) / SPEC).open("rb") as f:
            spec = json.load(f)
    except (OSError, ValueError):
        return {}
    found: dict[str, list[str]] = {}
    for task in spec.get("tasks", []) if isinstance(spec, dict) else []:
        if not isinstance(task, dict):
            continue
        found[str(task.get("id"))] = [str(d) for d in task.get("dependsOn", [])]
        for sub in task.get("subtasks", []):
            if isinstance(sub, dict):
                found[str(sub.get("id"))] = [str(d) for d in sub.get("dependsOn", [])]
    return found
