"""`swarmforge send`: queue a handoff from the user to a role, through the gate."""

from __future__ import annotations

import argparse
import sys

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_OK, SwarmforgeError


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `send`."""
    from swarmforge.cli.common import project_option

    send = sub.add_parser(
        "send",
        help="queue a handoff from the user to a role (through the gate)",
        description="Queue a handoff from 'user' in the main checkout's outbox, checked and "
        "stamped by the same gate as an agent's draft; the delivery daemon takes it to the "
        "role's inbox. A note's message is the first line of TEXT (cut to 80 characters); "
        "the whole TEXT, any length, follows in the body.",
    )
    send.add_argument("role", metavar="ROLE", help="the recipient, or a comma list of them")
    send.add_argument("text", metavar="TEXT", help="what to ask; '-' reads it from stdin")
    send.add_argument(
        "--type", default="note", metavar="TYPE", help="note (default) or git_handoff"
    )
    send.add_argument(
        "--priority", default="50", metavar="NN", help="00 (first) to 99 (last); default 50"
    )
    send.add_argument(
        "--commit",
        default="",
        metavar="SHA",
        help="git_handoff: the commit, as 10 hex characters (git rev-parse --short=10)",
    )
    send.add_argument(
        "--task",
        default="",
        metavar="NAME",
        help="git_handoff: the task name (default: made from the first line of TEXT)",
    )
    project_option(send)
    send.add_argument("--json", action="store_true", help="print the queued handoff as JSON")
    send.set_defaults(handler=_send)


def _text(arg: str) -> str:
    if arg != "-":
        return arg
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SwarmforgeError("The text on stdin is not valid UTF-8.") from None


def _send(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root
    from swarmforge.handoff import fromuser

    root = project_root(ns.project)
    path, handoff = fromuser.send(
        root,
        ns.role,
        _text(ns.text),
        type_=ns.type,
        priority=ns.priority,
        commit=ns.commit,
        task=ns.task,
    )
    queued = {"path": path, "headers": dict(handoff.headers), "body": handoff.body}
    emit(ns.json, queued, f"HANDOFF QUEUED: {path}")
    return EXIT_OK
