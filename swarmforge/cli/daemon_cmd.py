"""`swarmforge daemon start|stop|status|run`: the delivery daemon."""

from __future__ import annotations

import argparse
import shlex

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_NOT_RUNNING, EXIT_OK, SwarmforgeError


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the `daemon` subcommand."""
    from swarmforge.cli.common import project_option

    daemon = sub.add_parser(
        "daemon",
        help="the delivery daemon (handoffd)",
        description="Deliver handoffs from every role's outbox to the "
        "recipients' inboxes, and wake the recipients.",
    )
    actions = daemon.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("start", "start a detached daemon (exit 0 if one runs already)"),
        ("stop", "stop the daemon; returns when it is gone"),
        ("status", "show whether it runs, and the outbox and failed counts"),
        ("run", "run in the foreground"),
    ):
        p = actions.add_parser(name, help=text, description=text)
        project_option(p)
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        if name in ("start", "run"):
            p.add_argument(
                "--notify",
                choices=("tmux", "none", "command"),
                default="tmux",
                help="how recipients are woken (default: tmux, on the project's "
                "private socket; roles without a session are skipped)",
            )
            p.add_argument(
                "--notify-command",
                metavar="CMD",
                help="with --notify command: the command to run per wake-up "
                "(split like a shell would, never run through one)",
            )
        if name == "run":
            p.add_argument("--once", action="store_true", help="deliver what is there, then exit")
        p.set_defaults(handler=globals()[f"_{name}"])


def _notify_args(ns: argparse.Namespace) -> list[str]:
    if ns.notify == "command" and not ns.notify_command:
        raise SwarmforgeError("--notify command needs --notify-command CMD.")
    args = ["--notify", ns.notify]
    if ns.notify_command:
        args += ["--notify-command", ns.notify_command]
    return args


def _start(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root
    from swarmforge.daemon import starting

    root = project_root(ns.project)
    pid, already = starting.start(root, _notify_args(ns))
    word = "already running" if already else "started"
    emit(
        ns.json,
        {"running": True, "pid": pid, "started": not already},
        f"handoffd {word} (pid {pid})",
    )
    return EXIT_OK


def _stop(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root
    from swarmforge.daemon import stopping

    pid = stopping.stop(project_root(ns.project))
    text = "handoffd was not running" if pid is None else f"handoffd stopped (pid {pid})"
    emit(ns.json, {"running": False, "stopped": pid}, text)
    return EXIT_OK


def _status(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root
    from swarmforge.daemon.status import status as daemon_status

    state = daemon_status(project_root(ns.project))
    running = f"running (pid {state.pid})" if state.running else "not running"
    lines = [f"handoffd: {running}", f"log: {state.log}"]
    lines += [f"  {r.role:16s} outbox {r.outbox:4d}  failed {r.failed:4d}" for r in state.roles]
    emit(ns.json, state.as_json(), "\n".join(lines))
    return EXIT_OK if state.running else EXIT_NOT_RUNNING


def _run(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root
    from swarmforge.daemon import handoffd, wake

    root = project_root(ns.project)
    _notify_args(ns)
    command = shlex.split(ns.notify_command) if ns.notify_command else None
    # The daemon's own log (set up by handoffd.run) also records failed wake-ups;
    # a single pass waits for its wake-ups instead of leaving them to a thread.
    waker = wake.make(ns.notify, root, command, background=not ns.once, log=handoffd.logger(root))
    count = handoffd.run(root, waker, once=ns.once)
    if ns.once:
        emit(ns.json, {"delivered": count}, f"processed {count} file(s)")
    return EXIT_OK
