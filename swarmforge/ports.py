"""Deterministic ports: a branch's port is a stable hash of its project and name into [4000, 5000).

The home port of a branch is SHA-256 of `<project>\\0<branch>`: the real path of the
project's main checkout, a NUL byte, and the branch name, as UTF-8. The project is
part of it so that two swarms on one machine do not hand their `master` roles the
same port. The hash is never Python's `hash()`, which is salted per process
(PYTHONHASHSEED) and would give a role a new port on every start.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path

from swarmforge.errors import SwarmforgeError

PORT_MIN = 4000
PORT_MAX = 5000  # exclusive
PORT_SPAN = PORT_MAX - PORT_MIN

# A server usually listens on every address (0.0.0.0 or ::) or on loopback; binding the
# wildcard of each family fails if any socket of that family holds the port, whatever
# its address. IPv6 only, so that the IPv6 probe does not count the IPv4 holders twice.
_PROBES = ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::"))


def project_identity(top: str) -> str:
    """The project part of the port formula: the real path of the main checkout.

    `top` is the top of the main checkout or of one of its linked worktrees (whose
    shared git dir is the main checkout's `.git`); a directory that is not the top of
    a git checkout stands for itself, as `up` would make it one.
    """
    from swarmforge.statedir import common_dir, git_dir_of

    here = os.path.realpath(top)
    git_dir = git_dir_of(here)
    if git_dir is None:
        return here
    shared = Path(os.path.realpath(common_dir(git_dir)))
    if shared == Path(os.path.realpath(git_dir)) or shared.name != ".git":
        return here
    return str(shared.parent)


def port_for(branch: str, project: str) -> int:
    """The home port of `branch` in `project` (a `project_identity`): the same number in
    every process, on every machine."""
    key = os.fsencode(project) + b"\0" + branch.encode("utf-8")
    digest = hashlib.sha256(key).digest()
    return PORT_MIN + int.from_bytes(digest[:8], "big") % PORT_SPAN


def _next(port: int) -> int:
    return PORT_MIN + (port - PORT_MIN + 1) % PORT_SPAN


def is_bound(port: int) -> bool:
    """True when another socket already holds `port`, so a server could not listen there.

    It binds the port for a moment, as the server would: no privilege is needed and it
    sees every process's sockets, where listing sockets shows other users' only to root
    on some systems. SO_REUSEADDR keeps a connection of a stopped server in TIME_WAIT
    from counting: the server itself would set it too. A family this machine lacks
    (no IPv6) is skipped.
    """
    for family, host in _PROBES:
        try:
            probe = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        with probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return True
    return False


def _never(port: int) -> bool:
    return False


def assign_ports(
    branches: Iterable[str],
    project: str,
    *,
    kept: Mapping[str, int] | None = None,
    bound: Callable[[int], bool] = _never,
) -> dict[str, int]:
    """Distinct ports for the branches of one run, independent of their order.

    A branch keeps its port from `kept` (what the session record says an earlier `up`
    gave it), so a resumed run's roles keep theirs. Every other home port goes to
    the first of its claimants in sorted order, so a branch that shares its home
    port with no other branch of the run keeps it (and `swarmforge port BRANCH`
    tells the truth for it). The remaining claimants, in sorted order, take the
    next free port upwards, wrapping from 4999 to 4000. A port for which `bound`
    says True (held by another process) is given to no branch, kept or not.
    """
    names = sorted(set(branches))
    if len(names) > PORT_SPAN:
        raise SwarmforgeError(
            f"Cannot give {len(names)} branches distinct ports: "
            f"the range [{PORT_MIN}, {PORT_MAX}) holds {PORT_SPAN}."
        )
    busy = _remembered(bound)
    ports = _kept_ports(names, kept or {}, busy)
    taken = set(ports.values())
    losers: list[str] = []
    for name in names:
        if name in ports:
            continue
        home = port_for(name, project)
        if home in taken or busy(home):
            losers.append(name)
        else:
            ports[name] = home
            taken.add(home)
    for name in losers:
        ports[name] = _next_free(port_for(name, project), taken, busy)
        taken.add(ports[name])
    return ports


def _remembered(bound: Callable[[int], bool]) -> Callable[[int], bool]:
    """`bound`, asked at most once per port: one assignment sees one state of the machine."""
    seen: dict[int, bool] = {}

    def busy(port: int) -> bool:
        if port not in seen:
            seen[port] = bound(port)
        return seen[port]

    return busy


def _kept_ports(
    names: list[str], kept: Mapping[str, int], busy: Callable[[int], bool]
) -> dict[str, int]:
    ports: dict[str, int] = {}
    for name in names:
        port = kept.get(name)
        if port is None or not PORT_MIN <= port < PORT_MAX:
            continue
        if port not in ports.values() and not busy(port):
            ports[name] = port
    return ports


def _next_free(home: int, taken: set[int], busy: Callable[[int], bool]) -> int:
    port = _next(home)
    for _ in range(PORT_SPAN):
        if port not in taken and not busy(port):
            return port
        port = _next(port)
    raise SwarmforgeError(
        f"No free port left in [{PORT_MIN}, {PORT_MAX}): every one is the run's or in use."
    )


def listeners(ports: Collection[int]) -> dict[int, list[int | None]] | None:
    """The pids of the processes listening on each of `ports` (TCP, IPv4 or IPv6).

    A pid is None where the system hides who holds the socket (another user's
    process). One read of the machine's socket table answers every port. None
    when the system does not let this user read that table.
    """
    import psutil

    wanted = set(ports)
    try:
        sockets = psutil.net_connections("tcp")
    except (psutil.AccessDenied, OSError):
        return None
    found: dict[int, list[int | None]] = {}
    for conn in sockets:
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port in wanted:
            found.setdefault(conn.laddr.port, []).append(conn.pid)
    return found
