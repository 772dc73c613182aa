"""A role's receive mode, `task` or `batch`, as roles.tsv gives it for the caller's role."""

from __future__ import annotations

from swarmforge import projectroot, roletable
from swarmforge.errors import Refused, SwarmforgeError


def receive_mode(cwd: str, role: str) -> str:
    """The caller's receive mode from roles.tsv: `task` or `batch`."""
    if not role:
        raise SwarmforgeError("Set SWARMFORGE_ROLE.")
    roles = roletable.read_roles(projectroot.find_root(cwd))
    entry = roles.get(role)
    if entry is None:
        raise SwarmforgeError(f"Unknown role: {role}")
    if entry.mode not in roletable.RECEIVE_MODES:
        raise Refused(f"INVALID_RECEIVE_MODE: {entry.mode} for role {role}")
    return entry.mode
