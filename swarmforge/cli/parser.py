"""Argument parsing for the `swarmforge` command, and the run of the subcommand it names.

Nothing is caught here: a subcommand's failure is raised through `run` to
`swarmforge.cli.main`, the command's one error boundary.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Mapping

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


# Each public subcommand and the module of swarmforge.cli whose `add` puts it on the
# parser, in the order `--help` lists them (None: the helpers, added here); then the
# entry points a run's own processes are started with, and their modules' `add_internal`.
PUBLIC: dict[str, str | None] = {
    "handoff": None,
    "ready": None,
    "done": None,
    "daemon": "daemon_cmd",
    "up": "session_cmd",
    "down": "session_cmd",
    "status": "status_cmd",
    "gc": "gc_cmd",
    "port": "port_cmd",
    "run": "run_cmd",
    "runs": "runs_cmd",
    "tail": "runs_cmd",
    "approve": "decide_cmd",
    "reject": "decide_cmd",
    "demo": "demo_cmd",
    "init": "setup_cmd",
    "doctor": "setup_cmd",
    "rehearse": "rehearse_cmd",
    "send": "send_cmd",
    "trust": "trust_cmd",
    "events": "events_cmd",
    "attach": "attach_cmd",
    "watch": "watch_cmd",
    "cockpit": "cockpit_cmd",
    "repair": "repair_cmd",
    "recover": "recover_cmd",
    "worker": "worker_cmd",
}
INTERNAL: dict[str, str] = {
    "role-loop": "processes_cmd",
    "supervise": "processes_cmd",
    "pane": "processes_cmd",
    "agent-state": "hooks_cmd",
    "notify-send": "hooks_cmd",
    "bell": "hooks_cmd",
    "run-worker": "run_cmd",
}


def _modules(table: Mapping[str, str | None], only: str | None) -> list[str | None]:
    """The modules that add `only` (every command if None), each once, in order."""
    return list(dict.fromkeys(table.values() if only is None else [table[only]]))


def build(only: str | None = None) -> argparse.ArgumentParser:
    """The `swarmforge` argument parser: with every command, or with only the module of
    the command `only` (a command then pays for no other command's parser)."""
    parser = argparse.ArgumentParser(
        prog="swarmforge", description="Run a swarm of coding agents on one git repository."
    )
    parser.add_argument("--version", action="version", version=f"swarmforge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _modules(PUBLIC, only):
        if module is None:
            _helpers(sub)
        else:
            importlib.import_module(f"swarmforge.cli.{module}").add(sub)
    return parser


def build_internal(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of the entry points a run's own processes are started with (`only`'s
    module, or all of them).

    Kept apart from `build` so that neither `--help` nor the error for a mistyped
    command lists them; they still run as `swarmforge NAME ...`.
    """
    parser = argparse.ArgumentParser(prog="swarmforge")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _modules(INTERNAL, only):
        importlib.import_module(f"swarmforge.cli.{module}").add_internal(sub)
    return parser


def run(args: list[str]) -> int:
    """Parse `args` and run the subcommand."""
    first = args[0] if args else ""
    if first in INTERNAL:
        parser = build_internal(first)
    else:
        parser = build(first if first in PUBLIC else None)
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
