"""What a host says of itself in its heartbeat: its roles, their ports, branches and
states, and the key it is kept under in the project's bucket."""

from __future__ import annotations

import socket

from pydantic import BaseModel, ConfigDict

from swarmforge.net.subjects import token

PRIMARY_KEY = "primary"  # the host that runs `up` without --host
HOST_PREFIX = "host."


class RoleBeat(BaseModel):
    """One role as its host reports it."""

    model_config = ConfigDict(extra="ignore")  # a newer host may say more

    name: str
    branch: str
    port: int
    agent: str | None = None  # the agent's state (working, waiting, ...), if recorded
    process: str | None = None  # running, exited or stopped, if recorded


class HostBeat(BaseModel):
    """What one host says of itself every few seconds."""

    model_config = ConfigDict(extra="ignore")

    host: str  # its name on the wire: `up --host NAME`, or the machine's name
    primary: bool  # the host that runs `up` without --host ("" in another's session record)
    machine: str  # socket.gethostname()
    pid: int | None  # its delivery daemon
    sent_at: float  # the sender's wall clock, seconds since the epoch
    run_id: str
    run_state: str
    roles: list[RoleBeat]

    @property
    def key(self) -> str:
        """The key of this host in the bucket."""
        return host_key(None if self.primary else self.host)


def host_key(host: str | None) -> str:
    """The key of host `host` (None: the host that runs `up` without --host)."""
    return PRIMARY_KEY if host is None else HOST_PREFIX + token(host)


def wire_name(host: str | None) -> str:
    """The name a host goes by: its --host name, or for the primary host its machine's."""
    return socket.gethostname() if host is None else host


def role_state(role: RoleBeat) -> str:
    """A role's state in one word: its agent's, else its process's."""
    return role.agent or role.process or "unknown"
