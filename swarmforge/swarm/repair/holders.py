"""Whose work may be stuck: every mailbox of the project's roles, and whether its agent is gone."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from swarmforge import roletable, statedir
from swarmforge.layout import ROLES_TSV
from swarmforge.swarm.status.role import RoleStatus
from swarmforge.swarm.status.summary import status

NO_SWARM = "no swarm running"


GONE = "agent gone"


EXITED = "agent exited"


@dataclass(frozen=True)
class Holder:
    """The roles working in one mailbox, and why their agent counts as gone (None: alive)."""

    roles: tuple[str, ...]
    path: str
    gone: str | None


def holders(root: str) -> list[Holder]:
    """Every mailbox of the project's roles, with whether its agent is gone, as `status` sees it.

    With no run recorded, the roles come from roles.tsv and every agent is gone.
    """
    swarm = status(root)
    if swarm.run_id is None:
        return _group([(name, path, NO_SWARM) for name, path in _table(root)])
    running = swarm.state == "running"
    return _group([(r.role, r.path, _gone(r) if running else NO_SWARM) for r in swarm.roles])


def _table(root: str) -> list[tuple[str, str]]:
    """(role, path) of each role in roles.tsv; none if there is no table."""
    if not Path(statedir.path(root, ROLES_TSV)).is_file():
        return []
    return [(name, entry.path) for name, entry in roletable.read_roles(root).items()]


def _gone(role: RoleStatus) -> str | None:
    """Why the agent of `role` counts as gone, or None while it works."""
    exited = role.agent_state is not None and role.agent_state.state == "exited"
    if exited or role.process.state == "exited":
        return EXITED
    return None if role.alive else GONE


def _group(roles: list[tuple[str, str, str | None]]) -> list[Holder]:
    """One Holder per mailbox: roles sharing a worktree share one, alive if any of them is."""
    by_path: dict[str, list[tuple[str, str | None]]] = {}
    for name, path, gone in roles:
        by_path.setdefault(os.path.realpath(path), []).append((name, gone))
    held = []
    for path, members in by_path.items():
        reasons = [gone for _, gone in members]
        gone = None if None in reasons else reasons[0]
        held.append(Holder(tuple(name for name, _ in members), path, gone))
    return held
