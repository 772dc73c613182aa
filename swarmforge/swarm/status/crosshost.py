"""The roles and hosts of a swarm on several hosts, as `status` shows them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class RemoteRole:
    """A role another host runs, as its last beat (if any) says."""

    role: str
    host: str
    reachable: bool
    state: str  # its state on its host, or `unreachable`
    port: int | None = None
    branch: str | None = None
    beat_age_seconds: int | None = None  # None: no beat ever mentioned it

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "remote": True}


@dataclass(frozen=True)
class HostView:
    """One host of the swarm: whether it beats, and since when."""

    host: str
    this: bool  # the host status runs on
    reachable: bool
    age_seconds: int | None  # of its last beat; None: never seen
    machine: str | None = None
    pid: int | None = None  # its delivery daemon
    roles: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "roles": list(self.roles)}


@dataclass(frozen=True)
class CrossHost:
    """Every host of the swarm and the roles the others run; `error` when the server
    could not be asked (then only this host's roles are known)."""

    this_host: str
    roles: list[RemoteRole]
    hosts: list[HostView]
    error: str | None = None

    def extend_json(self, shown: dict[str, object], local: list[dict[str, object]]) -> None:
        """Add the hosts to `status --json`: a `host` per role, the other hosts' roles, `hosts`."""
        for role in local:
            role["host"] = self.this_host
        shown["roles"] = local + [role.as_json() for role in self.roles]
        shown["hosts"] = [host.as_json() for host in self.hosts]
        shown["transport_error"] = self.error
