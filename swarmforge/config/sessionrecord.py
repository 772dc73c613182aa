"""The record of the project's swarm run (`.swarmforge/run.json`), validated when read.

The model (`SessionRecord`, whose roles are `RoleRecord`s of `config/rolerecord.py`)
and the only functions that read and write the file, under the lock every writer holds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from swarmforge import filewrite, statedir
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.layout import SESSION_RECORD, SESSION_RECORD_LOCK
from swarmforge.locks import Exclusive
from swarmforge.records import read_json_model

LOCK_TIMEOUT = 30.0  # seconds; its holders let go within milliseconds


class SessionRecord(BaseModel):
    """One life of a swarm on this project, resumed by the next `up` until purged."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    project: str
    backend: Literal["tmux", "headless"]
    state: Literal["running", "stopped"]
    started_at: str
    runner_pid: int | None = None
    inhibitor_pid: int | None = None
    roles: list[RoleRecord]  # the roles this host runs
    # With roles on several hosts ([transport] and `host` in swarmforge.toml): the name
    # this host was started under (`up --host NAME`; None: the host of every role
    # placed nowhere in particular), and every role another host runs, with that
    # host's name ("" for the host that runs `up` without --host).
    host: str | None = None
    remote: dict[str, str] = {}

    def role(self, name: str) -> RoleRecord | None:
        """The record of role `name`."""
        return next((r for r in self.roles if r.name == name), None)


def record_path(root: str) -> str:
    """Where the session record of the project at `root` lives."""
    return statedir.path(root, SESSION_RECORD)


def load(root: str) -> SessionRecord | None:
    """The project's session record, or None if it has none; CorruptFile if it is damaged."""
    return read_json_model(record_path(root), SessionRecord)


def _locked(root: str) -> Exclusive:
    """The lock every writer of the record holds, from the read its change builds on to
    the write: `up`, `down`, `gc` and the headless runner write it, and only the last
    runs beside the others. Held for an instant, never while waiting for something else."""
    return Exclusive(
        statedir.path(root, SESSION_RECORD_LOCK), timeout=LOCK_TIMEOUT, what="session record lock"
    )


def _write(root: str, record: SessionRecord) -> None:
    filewrite.atomic_write(record_path(root), (record.model_dump_json(indent=2) + "\n").encode())


def save(root: str, record: SessionRecord) -> None:
    """Write the session record atomically, whatever it held."""
    with _locked(root):
        _write(root, record)


def update(root: str, change: Callable[[SessionRecord], None]) -> SessionRecord | None:
    """Apply `change` to the session record as it is now and write it; None if there is none."""
    with _locked(root):
        record = load(root)
        if record is not None:
            change(record)
            _write(root, record)
        return record


def remove(root: str) -> None:
    """Forget the run (after a purge)."""
    with _locked(root):
        Path(record_path(root)).unlink(missing_ok=True)
