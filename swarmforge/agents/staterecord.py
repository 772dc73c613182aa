"""The recorded state of each role's agent (`agents/<role>.state.json`), and its event."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from swarmforge import events, filewrite, statedir
from swarmforge.agents.reports import Report
from swarmforge.agents.state import State
from swarmforge.errors import CorruptFile
from swarmforge.layout import AGENTS_DIR
from swarmforge.locks import Exclusive
from swarmforge.records import read_json_model


def state_path(root: str, role: str) -> Path:
    """Where the combined state of `role` is recorded."""
    return Path(statedir.path(root, AGENTS_DIR), f"{role}.state.json")


class StateRecord(BaseModel):
    """The recorded state of one role, and the activity samples it was judged from."""

    model_config = ConfigDict(extra="forbid")

    role: str
    run_id: str
    state: State
    since: str
    reason: str = ""
    exit_code: int | None = None
    cpu: float | None = None  # the process tree's CPU seconds at `sampled_at`
    log_size: int | None = None
    sampled_at: float | None = None
    active_at: float | None = None
    report: Report | None = None


def load_record(root: str, role: str, run_id: str) -> StateRecord | None:
    """The recorded state of `role` in run `run_id`, or None."""
    try:
        found = read_json_model(str(state_path(root, role)), StateRecord)
    except CorruptFile:
        return None  # rewritten by the next refresh
    return found if found is not None and found.run_id == run_id else None


def save_record(root: str, record: StateRecord) -> None:
    """Write the state of one role atomically."""
    path = state_path(root, record.role)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (record.model_dump_json(indent=2) + "\n").encode()
    filewrite.atomic_write(str(path), data, durable=False)


def lock(root: str, role: str) -> Exclusive:
    """The short lock around one role's read-judge-write (the supervisor and a hook may race)."""
    path = Path(statedir.path(root, AGENTS_DIR), f"{role}.state.lock")
    return Exclusive(str(path), what="agent state")


def emit_change(root: str, before: StateRecord | None, after: StateRecord) -> None:
    """The `agent-state` event of a recorded change (none if the state did not change)."""
    if before is not None and before.state == after.state:
        return
    fields: dict[str, object] = {
        "role": after.role,
        "run_id": after.run_id,
        "state": after.state,
        "previous": before.state if before else None,
        "reason": after.reason,
    }
    if after.exit_code is not None:
        fields["exit_code"] = after.exit_code
    events.emit(root, "agent-state", fields)
