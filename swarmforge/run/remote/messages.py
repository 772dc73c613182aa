"""The messages of planned-run tasks for workers on other hosts: an attempt of a task, and
how it ended.

Results carry the last 64 KiB of stdout and stderr in base64 (a task's output is
bytes, not text).
"""

from __future__ import annotations

import base64
import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from swarmforge.run.report.markdown import TAIL
from swarmforge.run.spec.fieldtypes import TaskId, refuse
from swarmforge.run.spec.labels import label_problem

_RUN_ID = re.compile(r"run-[0-9a-f]{16}\Z")
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?\Z")


RunId = Annotated[str, refuse(lambda v: None if _RUN_ID.match(v) else f"bad run id {v!r}")]
Label = Annotated[str, refuse(label_problem)]
Commit = Annotated[str, refuse(lambda v: None if _SHA.match(v) else f"bad commit {v!r}")]


class TaskMessage(BaseModel):
    """One attempt of one task, as a worker receives it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    runId: RunId
    taskId: TaskId
    attempt: int = Field(ge=1)
    argv: list[str] = Field(min_length=1)
    env: dict[str, str]  # added to the worker's environment
    cwd: str = ""  # where the command runs, relative to the checkout (its root: "")
    isolate: bool
    base: Commit  # the commit the checkout starts from, on the hub
    port: int | None = None  # an isolated task's PORT
    labels: list[Label] = Field(default_factory=list)


class TaskResult(BaseModel):
    """How one attempt of one task ended on a worker."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    runId: RunId
    taskId: TaskId
    attempt: int = Field(ge=1)
    exitCode: int | None
    error: str | None = None  # the command could not run, or its branch not be pushed
    stdout: str = ""  # base64 of the last TAIL bytes
    stderr: str = ""
    worker: str  # the worker's name (its labels and host)
    host: str
    cwd: str  # where it ran, on the worker's host
    branch: str | None = None  # pushed to the hub (isolated tasks)
    rescued: str | None = None  # uncommitted work, pushed to the hub under this ref

    @property
    def ok(self) -> bool:
        """Done (exit 0 and nothing went wrong around it) rather than failed."""
        return self.exitCode == 0 and self.error is None

    def output(self) -> tuple[bytes, bytes]:
        """The tails of stdout and stderr."""
        return base64.b64decode(self.stdout), base64.b64decode(self.stderr)


def tail64(data: bytes) -> str:
    """The last TAIL bytes of `data`, in base64, for a TaskResult."""
    return base64.b64encode(data[-TAIL:]).decode("ascii")


def result_of(
    task: TaskMessage,
    worker: str,
    host: str,
    code: int | None,
    error: str | None,
    out: bytes = b"",
    err: bytes = b"",
    cwd: str = "",
    branch: str | None = None,
    rescued: str | None = None,
) -> TaskResult:
    """How attempt `task` ended on `worker` of `host`: a TaskResult."""
    return TaskResult(
        runId=task.runId,
        taskId=task.taskId,
        attempt=task.attempt,
        exitCode=code,
        error=error,
        stdout=tail64(out),
        stderr=tail64(err),
        worker=worker,
        host=host,
        cwd=cwd,
        branch=branch,
        rescued=rescued,
    )
