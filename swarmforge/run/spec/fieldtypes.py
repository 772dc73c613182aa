"""The field types of a run spec's tasks: each refuses, in one line, what it cannot hold."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BeforeValidator, ConfigDict

from swarmforge.rolenames import role_name_problem
from swarmforge.run.parking.rules import METADATA_KEYS
from swarmforge.run.spec.canonical import canonical

Tier = Literal["T1", "T2", "T3", "T4"]

MAX_ID = 64

_T = TypeVar("_T")
_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
# strict: a spec says `true` and `4`, never `"yes"` or `"4"`; forbid: a typo is an error.
STRICT = ConfigDict(strict=True, extra="forbid")


def id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot name a task (it becomes a file name and a git ref component)."""
    if not _ID.match(task_id) or len(task_id) > MAX_ID:
        return (
            f"invalid task id '{task_id}': use 1 to {MAX_ID} letters, digits, '-', '_' or '.', "
            "not starting with '.' or '-'"
        )
    if ".." in task_id or task_id.endswith((".", ".lock")):
        return f"invalid task id '{task_id}': git refuses '..', a trailing '.' or '.lock' in a ref"
    return None


def _command_problem(argv: list[str]) -> str | None:
    if not argv or not argv[0]:
        return "a command needs a program: its first element is missing or empty"
    return "a command argument cannot contain NUL" if any("\0" in a for a in argv) else None


def _depends_problem(deps: list[str]) -> str | None:
    twice = sorted(dep for dep in set(deps) if deps.count(dep) > 1)
    return f"'{twice[0]}' is listed twice" if twice else None


def _metadata_problem(metadata: dict[str, Any]) -> str | None:
    # A park key that is not a boolean is refused: read as false, it would run the task unattended.
    for key in METADATA_KEYS:
        if key in metadata and not isinstance(metadata[key], bool):
            return f"'{key}' must be true or false, not {metadata[key]!r}"
    try:
        canonical(metadata)  # the run id hashes it: it needs one JSON form
    except (TypeError, ValueError) as exc:
        return f"not a JSON value: {exc}"
    return None


def _no_shell(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError('a command is an argv list such as ["make", "test"], not a shell string')
    return value


def refuse(problem: Callable[[_T], str | None]) -> AfterValidator:
    """A validator that refuses a value for which `problem` says why (in one line)."""

    def check(value: _T) -> _T:
        message = problem(value)
        if message:
            raise ValueError(message)
        return value

    return AfterValidator(check)


TaskId = Annotated[str, refuse(id_problem)]
Command = Annotated[list[str], BeforeValidator(_no_shell), refuse(_command_problem)]
# The order of dependencies means nothing; sorting keeps the canonical form canonical.
DependsOn = Annotated[list[str], refuse(_depends_problem), AfterValidator(sorted)]
Metadata = Annotated[dict[str, Any], refuse(_metadata_problem)]
RoleName = Annotated[str, refuse(role_name_problem)]
Goal = Annotated[str, refuse(lambda goal: None if goal.strip() else "a run needs a goal")]
