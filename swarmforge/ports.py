"""Deterministic ports: a branch's port is a stable hash of its name into [4000, 5000).

The hash is SHA-256 of the UTF-8 name, never Python's `hash()`, which is salted
per process (PYTHONHASHSEED) and would give a role a new port on every start.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from swarmforge.errors import SwarmforgeError

PORT_MIN = 4000
PORT_MAX = 5000  # exclusive
PORT_SPAN = PORT_MAX - PORT_MIN


def port_for(branch: str) -> int:
    """The home port of `branch`: the same number in every process, on every machine."""
    digest = hashlib.sha256(branch.encode("utf-8")).digest()
    return PORT_MIN + int.from_bytes(digest[:8], "big") % PORT_SPAN


def _next(port: int) -> int:
    return PORT_MIN + (port - PORT_MIN + 1) % PORT_SPAN


def assign_ports(branches: Iterable[str]) -> dict[str, int]:
    """Distinct ports for the branches of one run, independent of their order.

    Every home port goes to the first of its claimants in sorted order, so a
    branch that shares its home port with no other branch of the run keeps it
    (and `swarmforge port BRANCH` tells the truth for it). The remaining
    claimants, in sorted order, take the next free port upwards, wrapping from
    4999 to 4000.
    """
    names = sorted(set(branches))
    if len(names) > PORT_SPAN:
        raise SwarmforgeError(
            f"Cannot give {len(names)} branches distinct ports: "
            f"the range [{PORT_MIN}, {PORT_MAX}) holds {PORT_SPAN}."
        )
    ports: dict[str, int] = {}
    taken: set[int] = set()
    losers: list[str] = []
    for name in names:
        home = port_for(name)
        if home in taken:
            losers.append(name)
        else:
            ports[name] = home
            taken.add(home)
    for name in losers:
        port = _next(port_for(name))
        while port in taken:
            port = _next(port)
        ports[name] = port
        taken.add(port)
    return ports
