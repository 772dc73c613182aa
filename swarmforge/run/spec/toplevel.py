"""A top-level task of a run spec: a worker, or a lead when it has subtasks or a fan-out."""

from __future__ import annotations

from pydantic import Field, model_validator

from swarmforge.run.spec.fanout import FanOut, expand
from swarmforge.run.spec.task import SubtaskSpec, TaskFields


class TaskSpec(TaskFields):
    """A top-level task (depth 1): a worker, or a lead when it has subtasks or a fan-out."""

    subtasks: list[SubtaskSpec] = Field(default_factory=list)
    # Replaced by its expansion in `subtasks` once validated, so the canonical form of a
    # fan-out is the canonical form of the tasks it stands for.
    fanOut: FanOut | None = None

    @model_validator(mode="after")
    def _check_shape(self) -> TaskSpec:
        if self.fanOut is not None:
            if self.subtasks:
                raise ValueError(f"task '{self.id}' has both subtasks and fanOut: use one")
            self.subtasks, self.fanOut = expand(self.id, self.fanOut), None
        self._check_action(lead=self.is_lead)
        return self

    @property
    def is_lead(self) -> bool:
        """True when the task runs subtasks rather than a command or a role."""
        return bool(self.subtasks)
