"""`status`: the session's state and every role's, and the shape `status --json` prints."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from swarmforge import tagging
from swarmforge.config import sessionrecord
from swarmforge.daemon import running
from swarmforge.daemon.held import Held
from swarmforge.daemon.held import read as held_mail
from swarmforge.daemon.paths import Paths
from swarmforge.git import command
from swarmforge.swarm.portholders import port_holders
from swarmforge.swarm.status.crosshost import CrossHost
from swarmforge.swarm.status.heartbeats import cross_host
from swarmforge.swarm.status.limits import budgets, stall_seconds
from swarmforge.swarm.status.role import RoleStatus, role_status
from swarmforge.swarm.teardown import is_running
from swarmforge.tmux.server import project_socket


@dataclass(frozen=True)
class SwarmStatus:
    """The run's state and every role's."""

    project: str
    run_id: str | None
    state: str  # none, running or stopped
    daemon: int | None
    roles: list[RoleStatus]
    rescues: list[str]
    backend: str | None = None
    live: bool = False
    runner_pid: int | None = None
    tmux_socket: str | None = None
    budget: int | None = None  # the tokens every role together may spend in the run
    cross: CrossHost | None = None  # with [transport]: the other hosts and their roles
    held: tuple[Held, ...] = ()  # outbox files the daemon can deliver to nobody yet

    def as_json(self) -> dict[str, object]:
        """The shape `swarmforge status --json` prints."""
        shown: dict[str, object] = {"project": self.project, "run_id": self.run_id}
        if self.run_id is not None:
            shown |= {
                "backend": self.backend,
                "state": self.state,
                "live": self.live,
                "runner_pid": self.runner_pid,
                "tmux_socket": self.tmux_socket,
            }
        else:
            shown["state"] = self.state
        shown |= {
            "daemon": self.daemon,
            "roles": [role.as_json() for role in self.roles],
            "rescues": self.rescues,
            "budget": self.budget,
            "held": [{"name": h.name, "path": h.path, "reason": h.reason} for h in self.held],
        }
        if self.cross is not None:
            self.cross.extend_json(shown, [role.as_json() for role in self.roles])
        return shown


def rescues(root: str) -> list[str]:
    """Refs holding uncommitted work saved when worktrees were removed, of every run."""
    result = command.run(root, "for-each-ref", "--format=%(refname)", "refs/swarmforge/rescue/")
    return result.stdout.decode().split() if result.ok else []


def status(root: str, sizes: bool = False, hosts: bool = False) -> SwarmStatus:
    """The run's state and every role's; with `sizes`, each worktree's disk use too; with
    `hosts` and `[transport]`, the roles of the swarm's other hosts.

    Measuring a worktree reads every file's metadata (about 0.1 s for 20,000 files), and
    asking the NATS server takes a round trip or a timeout: too slow for the live views,
    which call this whenever the swarm changes (and ask the server on a timer of their
    own); `swarmforge status` asks for both.
    """
    root = os.path.realpath(root)
    record = sessionrecord.load(root)
    daemon = running.running_pid(Paths(root))
    if record is None:
        return SwarmStatus(
            root,
            None,
            "none",
            daemon,
            [],
            rescues(root),
            budget=budgets(root).swarm,
            cross=cross_host(root, None) if hosts else None,
            held=tuple(held_mail(root)),
        )
    now = time.time()
    stall_after = stall_seconds(root)
    limits = budgets(root)
    held = port_holders(root, record)
    table = tagging.ProcessTable()  # walked once for every role's agent, not once per role
    return SwarmStatus(
        project=root,
        run_id=record.run_id,
        state=record.state,
        daemon=daemon,
        roles=[
            role_status(root, record, r, now, stall_after, limits, held.get(r.name), sizes, table)
            for r in record.roles
        ],
        rescues=rescues(root),
        backend=record.backend,
        live=is_running(root, record),
        runner_pid=record.runner_pid,
        tmux_socket=project_socket(root) if record.backend == "tmux" else None,
        budget=limits.swarm,
        cross=cross_host(root, record) if hosts else None,
        held=tuple(held_mail(root)),
    )
