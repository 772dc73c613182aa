"""Argument parsing for the `swarmforge` command and the error boundary of its subcommands."""

from __future__ import annotations

import argparse
import sys

from swarmforge import __version__


def build() -> argparse.ArgumentParser:
    """The `swarmforge` argument parser."""
    parser = argparse.ArgumentParser(
        prog="swarmforge", description="Run a swarm of coding agents on one git repository."
    )
    parser.add_argument("--version", action="version", version=f"swarmforge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handoff = sub.add_parser(
        "handoff", help="validate a handoff draft and queue it (bin/swarm_handoff.sh)"
    )
    handoff.add_argument("draft", help="the draft file: headers only, see PROTOCOL.md")
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
    return parser


def run(args: list[str]) -> int:
    """Parse `args` and run the subcommand."""
    parser = build()
    ns = parser.parse_args(args)
    if ns.command is None:
        parser.print_help(sys.stderr)
        return 1
    # Every subcommand that exists today is a helper, reached before argparse.
    from swarmforge import helpers

    return helpers.main(args)
