"""Argument parsing for the `swarmforge` command, and the run of the subcommand it names.

Nothing is caught here: a subcommand's failure is raised through `run` to
`swarmforge.cli.main`, the command's one error boundary.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from swarmforge import __version__


def _helpers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    handoff = sub.add_parser(
        "handoff", help="validate a handoff draft and queue it (bin/swarm_handoff.sh)"
    )
    handoff.add_argument("draft", help="the draft file: headers only, see docs/protocol.md")
    for name, text in (
        ("ready", "accept the next task or batch (bin/ready_for_next.sh)"),
        (
            "done",
            "complete the current task or batch and accept the next (bin/done_with_current.sh)",
        ),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument(
            "--mode",
            choices=("task", "batch"),
            help="receive mode; default: the role's mode in roles.tsv",
        )
        p.add_argument("--json", action="store_true", help="print the result as JSON")


def build() -> argparse.ArgumentParser:
    """The `swarmforge` argument parser."""
    from swarmforge.cli import (
        daemon_cmd,
        decide_cmd,
        demo_cmd,
        gc_cmd,
        port_cmd,
        run_cmd,
        runs_cmd,
        session_cmd,
        setup_cmd,
        status_cmd,
    )

    parser = argparse.ArgumentParser(
        prog="swarmforge", description="Run a swarm of coding agents on one git repository."
    )
    parser.add_argument("--version", action="version", version=f"swarmforge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _helpers(sub)
    daemon_cmd.add(sub)
    session_cmd.add(sub)
    status_cmd.add(sub)
    gc_cmd.add(sub)
    port_cmd.add(sub)
    run_cmd.add(sub)
    runs_cmd.add(sub)
    decide_cmd.add(sub)
    demo_cmd.add(sub)
    setup_cmd.add(sub)
    from swarmforge.cli import rehearse_cmd

    rehearse_cmd.add(sub)
    from swarmforge.cli import send_cmd

    send_cmd.add(sub)
    from swarmforge.cli import trust_cmd

    trust_cmd.add(sub)
    from swarmforge.cli import events_cmd

    events_cmd.add(sub)
    from swarmforge.cli import attach_cmd

    attach_cmd.add(sub)
    from swarmforge.cli import watch_cmd

    watch_cmd.add(sub)
    from swarmforge.cli import cockpit_cmd

    cockpit_cmd.add(sub)
    from swarmforge.cli import repair_cmd

    repair_cmd.add(sub)
    from swarmforge.cli import worker_cmd

    worker_cmd.add(sub)
    return parser


def build_internal() -> tuple[argparse.ArgumentParser, frozenset[str]]:
    """The parser of the entry points a run's own processes are started with, and their names.

    Kept apart from `build` so that neither `--help` nor the error for a mistyped
    command lists them; they still run as `swarmforge NAME ...`.
    """
    from swarmforge.cli import hooks_cmd, processes_cmd, run_cmd

    parser = argparse.ArgumentParser(prog="swarmforge")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    processes_cmd.add_internal(sub)
    hooks_cmd.add_internal(sub)
    run_cmd.add_internal(sub)
    return parser, frozenset(sub.choices)


def run(args: list[str]) -> int:
    """Parse `args` and run the subcommand."""
    internal, names = build_internal()
    parser = internal if args[:1] and args[0] in names else build()
    ns = parser.parse_args(args)
    handler: Callable[[argparse.Namespace], int] | None = getattr(ns, "handler", None)
    if handler is None:
        if ns.command is None:
            parser.print_help(sys.stderr)
            return 1
        # The helpers are normally reached before argparse; this is `--help`-free reuse.
        from swarmforge.cli import helpers

        return helpers.main(args)
    return handler(ns)
