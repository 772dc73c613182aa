"""Names the git layer hands to git: branches, rescue refs and worktree directories.

Every part is checked against the rules of `git check-ref-format` for one
component, plus a few of our own (no leading '-', no whitespace at all, a
length cap), before anything reaches git or the filesystem.
"""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError

BRANCH_PREFIX = "swarm"
RESCUE_PREFIX = "refs/swarmforge/rescue"
MAX_COMPONENT_BYTES = 100  # leaves room under NAME_MAX for "<run>-<task>.intent"
_FORBIDDEN = frozenset(" ~^:?*[\\/")


def component_problem(value: str) -> str | None:
    """Why `value` cannot be one component of a ref or a worktree name, or None."""
    if not value:
        return "is empty"
    if len(value.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES:
        return f"is longer than {MAX_COMPONENT_BYTES} bytes"
    bad = next((c for c in value if c in _FORBIDDEN or c.isspace() or not c.isprintable()), None)
    if bad is not None:
        return f"contains {bad!r}"
    if value[0] in ".-":
        return f"starts with {value[0]!r}"
    if value.endswith((".", ".lock")):
        return "ends with '.' or '.lock'"
    for sequence in ("..", "@{"):
        if sequence in value:
            return f"contains {sequence!r}"
    if value == "@":
        return "is '@'"
    return None


def check_component(value: str, what: str) -> str:
    """`value` if it is a valid single name component; SwarmforgeError naming it otherwise."""
    problem = component_problem(value)
    if problem is not None:
        raise SwarmforgeError(f"Invalid {what} {value!r}: it {problem}.")
    return value


def check_refname(refname: str, what: str) -> str:
    """`refname` if every '/'-separated part of it is a valid component; SwarmforgeError if not."""
    for part in refname.split("/"):
        problem = component_problem(part)
        if problem is not None:
            raise SwarmforgeError(f"Invalid {what} {refname!r}: component {part!r} {problem}.")
    return refname


def branch_name(run_id: str, task_id: str) -> str:
    """The branch of task `task_id` in run `run_id`: `swarm/<runId>/<taskId>`."""
    check_component(run_id, "run id")
    check_component(task_id, "task id")
    return f"{BRANCH_PREFIX}/{run_id}/{task_id}"


def rescue_ref(run_id: str, task_id: str) -> str:
    """The ref that keeps a task's rescued work: `refs/swarmforge/rescue/<runId>/<taskId>`."""
    check_component(run_id, "run id")
    check_component(task_id, "task id")
    return f"{RESCUE_PREFIX}/{run_id}/{task_id}"
