"""What every task of a run spec has, lead or worker, and the subtask: a worker, always a leaf."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from swarmforge.run.spec.fieldtypes import (
    STRICT,
    Command,
    DependsOn,
    Metadata,
    RoleName,
    TaskId,
    Tier,
)
from swarmforge.run.spec.labels import Labels


class TaskFields(BaseModel):
    """What every task has, lead or worker."""

    model_config = STRICT

    id: TaskId
    command: Command | None = None
    dependsOn: DependsOn = Field(default_factory=list)
    isolate: bool = False
    background: bool = False
    tier: Tier = "T1"
    irreversible: bool = False
    metadata: Metadata = Field(default_factory=dict)
    role: RoleName | None = None
    labels: Labels = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_no_labels(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Labels came later than the other fields: a task without any is written as it
        # was before them, so the run id of every earlier spec stays the same.
        data: dict[str, Any] = handler(self)
        if not data.get("labels"):
            data.pop("labels", None)
        return data

    def _check_action(self, *, lead: bool) -> None:
        if lead and (self.command is not None or self.role is not None):
            raise ValueError(
                f"task '{self.id}' is a lead (it has subtasks): it cannot have a command or a role"
            )
        if not lead and (self.command is None) == (self.role is None):
            raise ValueError(f"task '{self.id}' needs exactly one of command or role")
        if self.background and self.command is None:
            raise ValueError(f"background task '{self.id}' needs a command")
        if self.labels and (self.command is None or self.background):
            # Only a plain command goes to a worker on another host (`run --workers`).
            raise ValueError(f"task '{self.id}' has labels: only a plain command task can")
        if self.background and self.isolate:
            # A detached process outlives the task, and so would outlive its worktree.
            raise ValueError(f"background task '{self.id}' cannot be isolated")


class SubtaskSpec(TaskFields):
    """A worker: a subtask of a lead, always a leaf (depth 2)."""

    @model_validator(mode="before")
    @classmethod
    def _leaf(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("subtasks" in data or "fanOut" in data):
            raise ValueError(
                f"subtask '{data.get('id')}' cannot carry subtasks: the depth bound is "
                "orchestrator (0) -> lead (1) -> worker (2), and a worker is a leaf"
            )
        return data

    @model_validator(mode="after")
    def _check_shape(self) -> SubtaskSpec:
        self._check_action(lead=False)
        return self
