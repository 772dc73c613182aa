"""Who listens on a role's port, when it is not the role itself.

A port another process holds is one the role's server cannot listen on; `status` and
`doctor` name that process. One read of the socket table serves every role.
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil

from swarmforge import tagging
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.ports import listeners


@dataclass(frozen=True)
class PortHolder:
    """A process that listens on a role's port and is none of the role's own: the role's
    server cannot listen there."""

    pid: int | None  # None: the system does not say (another user's process)
    name: str | None  # its command name, when it can be read


def port_holders(root: str, record: SessionRecord) -> dict[str, PortHolder]:
    """Each role whose port another process listens on, and that process.

    One read of the socket table serves every role. A listener is the role's own when
    it, or a process it descends from, carries the role's tags (tagging.py): the agent
    and what it started, even a server that left its parent. Empty where the system
    does not show its sockets.
    """
    found = listeners({role.port for role in record.roles}) or {}
    held: dict[str, PortHolder] = {}
    for role in record.roles:
        for pid in found.get(role.port, []):
            holder = _foreign(pid, root, record.run_id, role.name)
            if holder is not None:
                held[role.name] = holder
                break
    return held


def _foreign(pid: int | None, root: str, run_id: str, role: str) -> PortHolder | None:
    """`pid` as a PortHolder unless it is one of `role`'s processes (or gone meanwhile)."""
    if pid is None:
        return PortHolder(None, None)
    try:
        listener = psutil.Process(pid)
        name = listener.name()
        lineage = [listener, *listener.parents()]
    except psutil.NoSuchProcess:
        return None
    except psutil.Error:
        return PortHolder(pid, None)  # not ours to read: none of the role's processes
    wanted = {**tagging.tags(run_id, root), "SWARMFORGE_ROLE": role}
    if any(_carries(p, wanted) for p in lineage):
        return None
    return PortHolder(pid, name)


def _carries(process: psutil.Process, wanted: dict[str, str]) -> bool:
    try:
        env = process.environ()
    except psutil.Error:
        return False
    return all(env.get(key) == value for key, value in wanted.items())
