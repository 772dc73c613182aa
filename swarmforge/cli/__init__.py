"""The `swarmforge` command: one command with subcommands."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmforge` console script."""
    args = sys.argv[1:] if argv is None else argv
    if (
        args
        and args[0] in ("handoff", "ready", "done")
        and "--help" not in args[1:]
        and "-h" not in args[1:]
    ):
        # The agent-facing helpers skip argparse: they must start fast.
        from swarmforge import helpers

        return helpers.main(args)
    from swarmforge.cli.parser import run

    return run(args)
