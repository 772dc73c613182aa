"""`attach`: putting a person's terminal into a role's live tmux session, or all of them tiled.

The sessions are on the project's private server (`tmux -L SOCKET`). Outside tmux the
terminal becomes a client of that server (`attach-session`, exec'd in our place). Inside
tmux the terminal is a client of the user's own server, and `switch-client` cannot reach
another server: a new window of the user's tmux runs the client instead. Such a client is
nested, and tmux refuses to start one while TMUX is set ("sessions should be nested with
care"), so it runs with TMUX unset. Without a role the client attaches to `OVERVIEW`, a
session whose panes are each a nested client of one role's session, tiled; it is made on
demand, ends when its last client leaves, and has a server of its own (`overview_socket`):
tmux 3.3 sometimes crashes when it ends a session whose panes are clients of the same
server, and that server would be the swarm's.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from swarmforge.config import sessionrecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import LOGS_DIR
from swarmforge.proc import replace, spawn
from swarmforge.rolenames import shown_name
from swarmforge.tmux.server import Tmux, project_socket
from swarmforge.tmux.usertmux import new_window_argv

OVERVIEW = "swarmforge-overview"  # alone on its server: no role's session to be taken for


@dataclass(frozen=True)
class Attach:
    """What `attach` runs: `argv`, which attaches `client` here or opens it in a window."""

    project: str
    socket: str
    session: str  # the role's session, or OVERVIEW (on `socket`, the overview's server)
    roles: list[str]
    argv: list[str]
    client: list[str]  # the attaching client as a terminal outside tmux runs it
    in_window: bool  # argv opens a window of the user's tmux and returns at once

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def attach_command(root: str, role: str | None = None) -> list[str]:
    """The command that attaches a terminal, in tmux or not, to `role` (None: all roles)."""
    return ["swarmforge", "attach", *([role] if role else []), "--project", os.path.realpath(root)]


def overview_socket(root: str) -> str:
    """The socket of the server that holds the overview; it exits with the overview."""
    return project_socket(root) + "-overview"


def plan(root: str, role: str | None = None, env: Mapping[str, str] | None = None) -> Attach:
    """How to attach to `role`'s session (None: every role's, tiled); makes the overview."""
    root = os.path.realpath(root)
    record = sessionrecord.load(root)
    if record is None or record.state != "running":
        raise SwarmforgeError(f"No swarm is running in {root}.", hint="`swarmforge up` starts one.")
    if record.backend == "headless":
        raise _headless(record, role)
    roles = _chosen(record, role)
    tmux_bin = spawn.which("tmux")
    if tmux_bin is None:
        raise SwarmforgeError(
            "Cannot find 'tmux' on PATH: attaching needs it.",
            hint="Install tmux; `swarmforge events --follow` follows the swarm without it.",
        )
    tmux = Tmux(project_socket(root))
    live = [r for r in roles if tmux.has_session(r.session_name)]
    if not live:
        raise _gone(root, record, role)
    session = live[0].session_name if role else OVERVIEW
    server = tmux if role else Tmux(overview_socket(root))
    if role is None:
        _overview(server, tmux_bin, tmux, live)
    client = server.attach_argv(session, tmux_bin)
    inside = bool((os.environ if env is None else env).get("TMUX"))
    # In the user's tmux, the current session's next window; -n also stops it being renamed.
    window = new_window_argv(session, _nested(client), tmux_bin)
    return Attach(
        root,
        server.socket,
        session,
        [r.name for r in live],
        window if inside else client,
        client,
        inside,
    )


def start(attach: Attach) -> None:
    """Run what `plan` decided: open the window and return, or become the client."""
    if not attach.in_window:
        replace.replace(attach.argv)
    result = spawn.run(attach.argv)
    if not result.ok:
        detail = result.stderr.decode(errors="replace").strip() or f"exit {result.returncode}"
        raise SwarmforgeError(
            f"tmux could not open a window in your tmux session: {detail}",
            hint="Outside tmux, run: " + shlex.join(attach.client),
        )


def _nested(client: list[str]) -> list[str]:
    env = spawn.which("env")
    if env is None:
        raise SwarmforgeError("Cannot find 'env' on PATH.", hint="Add /usr/bin to PATH.")
    return [env, "-u", "TMUX", *client]


def _overview(server: Tmux, tmux_bin: str, swarm: Tmux, roles: list[RoleRecord]) -> None:
    """Make the overview unless one with a pane for exactly these roles runs."""
    if server.pane_labels(OVERVIEW) == [r.name for r in roles]:
        return
    server.kill_server()  # a role came or went since it was made
    panes = [(r.name, _nested(swarm.attach_argv(r.session_name, tmux_bin))) for r in roles]
    server.start_tiled(OVERVIEW, panes)


def _chosen(record: SessionRecord, role: str | None) -> list[RoleRecord]:
    if role is None:
        return list(record.roles)
    found = record.role(role)
    if found is None:
        names = ", ".join(r.name for r in record.roles)
        raise SwarmforgeError(
            f"No role {shown_name(role)} in this swarm.",
            details=(f"Its roles: {names}.",),
            hint="Without ROLE, `swarmforge attach` shows all of them.",
        )
    return [found]


def _headless(record: SessionRecord, role: str | None) -> SwarmforgeError:
    name = role if role and record.role(role) else "<role>"
    return SwarmforgeError(
        "The swarm runs headless: its roles have no terminal to attach to.",
        hint=f"Follow it with `swarmforge events --follow`, or read "
        f"{Path(LOGS_DIR, name + '.log')}.",
    )


def _gone(root: str, record: SessionRecord, role: str | None) -> SwarmforgeError:
    if role is not None and any(
        Tmux(project_socket(root)).has_session(r.session_name) for r in record.roles
    ):
        return SwarmforgeError(
            f"Role {shown_name(role)} has no tmux session now.",
            hint="`swarmforge status` shows why; `swarmforge up` starts it again.",
        )
    return SwarmforgeError(
        f"No swarm is running in {root}: none of its tmux sessions is left.",
        hint="`swarmforge up` resumes the run (`swarmforge gc` cleans up after it).",
    )
