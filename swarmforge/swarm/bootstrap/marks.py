"""The setup-failed mark of a role (`.swarmforge/setup-failed/<role>.json`): made, read, cleared."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from pydantic import TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from swarmforge import filewrite, fsutil, statedir, times
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.layout import SETUP_FAILED_DIR


@dataclass(frozen=True)
class SetupFailure:
    """Why a role's bootstrap did not finish, as `.swarmforge/setup-failed/<role>.json` keeps it."""

    role: str
    reason: str  # one sentence: the command and how it ended
    command: str | None = None  # None: `up` stopped before the setup finished
    exit_code: int | None = None  # None: timed out, or never finished
    timed_out: bool = False
    last_lines: tuple[str, ...] = ()
    log: str = ""
    at: str = ""

    def as_json(self) -> dict[str, object]:
        return asdict(self)


_FAILURE = TypeAdapter(SetupFailure)
# A mark holds a reason and the last 16 KiB of output at most: anything larger was not made here.
MARK_LIMIT = 1024 * 1024


def mark_path(root: str, role: str) -> Path:
    """Where the setup-failed mark of `role` lives."""
    return Path(statedir.path(root, SETUP_FAILED_DIR), f"{role}.json")


def failure(root: str, role: str) -> SetupFailure | None:
    """The role's setup-failed mark, or None when it has none.

    A damaged mark still counts: the role stays unstarted until a bootstrap succeeds.
    """
    path = mark_path(root, role)
    try:
        data = fsutil.read_regular(str(path), limit=MARK_LIMIT)
        return _FAILURE.validate_json(data)
    except FileNotFoundError:
        return None
    except (fsutil.NotRegularFile, fsutil.FileTooLarge, ValidationError):
        return SetupFailure(role, f"its mark {path} cannot be read", log=str(path))


def ready(root: str, roles: Iterable[RoleRecord]) -> list[RoleRecord]:
    """The roles whose agents may start: every one not marked setup-failed."""
    return [role for role in roles if not os.path.lexists(mark_path(root, role.name))]


def failures(root: str, names: Iterable[str]) -> list[SetupFailure]:
    """The setup-failed marks of the roles `names`, in that order."""
    return [found for name in names if (found := failure(root, name)) is not None]


def mark(root: str, found: SetupFailure, durable: bool = True) -> None:
    path = mark_path(root, found.role)
    fsutil.makedirs(str(path.parent))
    data = (json.dumps(found.as_json(), indent=2) + "\n").encode()
    filewrite.atomic_write(str(path), data, durable=durable)


def clear(root: str, role: str) -> None:
    mark_path(root, role).unlink(missing_ok=True)


def stamp_now() -> str:
    return times.stamp()
