"""`swarmforge status`: every role of the swarm as text, or as JSON with `--json`."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_OK

if TYPE_CHECKING:
    from collections.abc import Iterator

    from swarmforge.swarm.bootstrap.marks import SetupFailure
    from swarmforge.swarm.portholders import PortHolder
    from swarmforge.swarm.status.crosshost import CrossHost
    from swarmforge.swarm.status.process import Process
    from swarmforge.swarm.status.role import RoleStatus
    from swarmforge.swarm.status.summary import SwarmStatus


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `status`."""
    from swarmforge.cli.common import project_json_options

    status = sub.add_parser(
        "status",
        help="per role: worktree, branch, port, agent, queue, "
        "current item, dirty files, failures, rescues",
    )
    project_json_options(status)
    status.set_defaults(handler=show)


def show(ns: argparse.Namespace) -> int:
    """Print every role's status (`--json`: as JSON)."""
    from swarmforge import text
    from swarmforge.cli.common import VIEWED, project_root
    from swarmforge.swarm.status.summary import status

    state = status(project_root(ns.project, VIEWED), sizes=True, hosts=True)
    # Branches, screens, setup output and other hosts' words are outside text: every line
    # is shown with its control characters escaped, whatever field it came from.
    emit(ns.json, state.as_json(), map(text.shown, _swarm_lines(state)))
    return EXIT_OK


def _swarm_lines(state: SwarmStatus) -> Iterator[str]:
    """The run and its daemon, each role, the other hosts, how to get in, rescued work."""
    daemon = f"daemon pid {state.daemon}" if state.daemon else "daemon not running"
    if state.run_id is None:
        yield f"no swarm in this project ({daemon}): `swarmforge up` starts one"
    else:
        yield f"run {state.run_id}: {state.state}, {daemon}"
    for role in state.roles:
        yield from _role_lines(role)
    if state.cross is not None:
        yield from (f"  {line}" for line in cross_host_lines(state.cross))
    if state.tmux_socket:
        from swarmforge.views.attach import attach_command

        command = shlex.join(attach_command(state.project))
        yield f"  get into a role: {command} ROLE  (every role, tiled: {command})"
    yield from (f"  rescued work: {ref}" for ref in state.rescues)
    yield from (f"  held mail: {h.name}: {h.reason}" for h in state.held)


def _role_lines(role: RoleStatus) -> Iterator[str]:
    """One role: its summary line, then what is wrong or worth knowing, indented."""
    from swarmforge.swarm.disk import readable

    current = role.current
    doing = f"{Path(current.path).name} for {current.age_seconds}s" if current else "idle"
    yield (
        f"  {role.role:12s} {'up  ' if role.alive else 'down'} port {role.port} "
        f"queued {role.queued:3d}  {doing}  dirty {role.dirty_files}  "
        f"failed {role.failed_items}  disk {readable(role.disk_bytes)}  {role.branch}"
    )
    if role.off_branch is not None:
        yield f"    HEAD is not on {role.branch}: {role.off_branch}"
    if role.port_conflict is not None:
        yield f"    {_held(role.port, role.port_conflict)}"
    yield from (f"    not read: {said}" for said in role.unreadable)
    if role.agent_state is not None:
        shown = role.agent_state
        code = f" (exit {shown.exit_code})" if shown.exit_code is not None else ""
        yield f"    agent {shown.state}{code} since {shown.since}: {shown.reason}"
    if role.tokens is not None and (role.tokens.total or role.budget is not None):
        spent = role.tokens
        limit = f" of {role.budget:,}" if role.budget is not None else ""
        yield (
            f"    tokens {spent.total:,}{limit}: in {spent.input:,}, out {spent.output:,}, "
            f"cache read {spent.cache_read:,}, cache write {spent.cache_write:,}"
        )
    if role.setup_failed is not None:
        yield from (f"    {line}" for line in _setup_lines(role.setup_failed))
    yield from (f"    {line}" for line in _process_lines(role.process))


def cross_host_lines(cross: CrossHost) -> list[str]:
    """What status says of the other hosts' roles and of every host."""
    from swarmforge.swarm.status.hostlines import beat_said, host_said
    from swarmforge.times import duration

    if cross.error is not None:
        return [f"other hosts not shown: {cross.error}"]
    lines = []
    for role in cross.roles:
        where = f"{role.role:12s} on {role.host}" + (f" port {role.port}" if role.port else "")
        if not role.reachable:
            lines.append(f"{where}  {beat_said(role)}")
            continue
        beat = f"beat {duration(role.beat_age_seconds)} ago"
        lines.append(f"{where}  {role.state}  ({beat})  {role.branch}")
    for host in cross.hosts:
        this = " (this host)" if host.this else ""
        lines.append(f"host {host.host}{this}: {host_said(host)}")
    return lines


def _held(port: int, holder: PortHolder) -> str:
    """What status says of a role's port that another process listens on."""
    who = f"pid {holder.pid}" if holder.pid is not None else "a process of another user"
    name = f" ({holder.name})" if holder.name else ""
    return f"port {port} is held by {who}{name}, not by this role"


def _setup_lines(failed: SetupFailure) -> list[str]:
    """What status says of a role whose worktree setup failed: why, where, the last lines."""
    lines = [f"setup-failed: {failed.reason}, agent not started (log: {failed.log})"]
    if failed.last_lines:
        lines += ["last lines:", *(f"  | {line}" for line in failed.last_lines)]
    return lines


def _process_lines(process: Process) -> list[str]:
    """What status says of a role process that exited: code, when, restart, last lines."""
    if process.state != "exited":
        if process.exit_code is None:
            return []
        return [
            f"restarted {process.restarts} time(s); last exit "
            f"{process.exit_code} at {process.exited_at}"
        ]
    restart = process.restart_at
    lines = [
        f"exited {process.exit_code} at {process.exited_at}"
        + (f", restarting at {restart}" if restart else ", not restarted")
        + f" (restarts so far: {process.restarts})"
    ]
    if process.last_lines:
        lines += ["last lines:", *(f"  | {line}" for line in process.last_lines[-5:])]
    return lines
