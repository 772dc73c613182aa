"""The `swarmforge` command: one command with subcommands."""

from __future__ import annotations

import os
import sys

from swarmforge.errors import EXIT_BROKEN_PIPE


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmforge` console script."""
    args = sys.argv[1:] if argv is None else argv
    try:
        return _dispatch(args)
    except BrokenPipeError:
        # The reader left (`swarmforge ... | head -1`): stop quietly, as a pipeline expects,
        # and keep the interpreter's own flush at exit from failing on the same pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _dispatch(args: list[str]) -> int:
    if (
        args
        and args[0] in ("handoff", "ready", "done")
        and "--help" not in args[1:]
        and "-h" not in args[1:]
    ):
        # The agent-facing helpers skip argparse: they must start fast.
        from swarmforge.cli import helpers

        return helpers.main(args)
    from swarmforge.cli.parser import run

    return run(args)
