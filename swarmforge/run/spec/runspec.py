"""A planned run's spec: its goal, its concurrency, its tasks, and the run id they hash to.

Every check that can fail before anything is journaled runs inside validation: id
syntax, the shape of each task, fan-out expansion, unique ids over the whole tree,
dependencies between siblings only, and dependency cycles.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field, model_validator

from swarmforge.run.spec.canonical import canonical
from swarmforge.run.spec.fieldtypes import STRICT, Goal
from swarmforge.run.spec.task import SubtaskSpec
from swarmforge.run.spec.toplevel import TaskSpec
from swarmforge.run.spec.tree import check_level, check_unique

MAX_CONCURRENCY = 256


class Ramp(BaseModel):
    """Concurrency starts at `initial` and grows by `step` after each task that ends done."""

    model_config = STRICT

    initial: int = Field(ge=1, le=MAX_CONCURRENCY)
    step: int = Field(ge=1, le=MAX_CONCURRENCY)


class RunSpec(BaseModel):
    """A planned run: its goal, its concurrency, and its tasks in priority order."""

    model_config = STRICT

    goal: Goal
    maxConcurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    ramp: Ramp | None = None
    tasks: list[TaskSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_tree(self) -> RunSpec:
        if self.ramp is not None and self.ramp.initial > self.maxConcurrency:
            raise ValueError(
                f"ramp.initial ({self.ramp.initial}) exceeds maxConcurrency ({self.maxConcurrency})"
            )
        check_unique(self.tasks)
        everyone = {task.id for _, task, _ in flatten(self)}
        check_level(self.tasks, everyone, "top-level tasks")
        for task in self.tasks:
            check_level(task.subtasks, everyone, f"subtasks of task '{task.id}'")
        return self


def flatten(spec: RunSpec) -> list[tuple[int, TaskSpec | SubtaskSpec, str | None]]:
    """Every task of the tree as (depth, task, parent id), leads before their subtasks."""
    out: list[tuple[int, TaskSpec | SubtaskSpec, str | None]] = []
    for task in spec.tasks:
        out.append((1, task, None))
        out.extend((2, sub, task.id) for sub in task.subtasks)
    return out


def canonical_json(spec: RunSpec) -> str:
    """The spec as canonical JSON: sorted keys, no whitespace, every default spelled out."""
    return canonical(spec.model_dump(mode="json"))


def run_id(spec: RunSpec) -> str:
    """The content-addressed id of a run: the same spec always names the same run."""
    return "run-" + hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()[:16]
