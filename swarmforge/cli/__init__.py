"""The `swarmforge` command: one command with subcommands, and its one error boundary."""

from __future__ import annotations

import os
import sys

from swarmforge.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    SwarmforgeError,
    os_error_line,
)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `swarmforge` console script and of the helper scripts.

    The one place where a failure becomes a message and an exit code, for every
    subcommand and helper alike: our errors with their own, an operating-system error
    as one line naming its path, Ctrl-C as 130, a reader that left as 141, quietly.
    Never a traceback for any of these. Two exits pass through untouched: argparse's
    usage errors (its message, status 2), and SIGTERM in a command that unwinds on it
    (128 + 15, see common.unwind_on_sigterm).
    """
    args = sys.argv[1:] if argv is None else argv
    try:
        return _dispatch(args)
    except SwarmforgeError as exc:
        _say(exc.lines())
        return exc.exit_code
    except BrokenPipeError:
        # The reader left (`swarmforge ... | head -1`): stop quietly, as a pipeline expects,
        # and keep the interpreter's own flush at exit from failing on the same pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        # A full disk, a read-only directory, a path made unusable underneath us.
        _say([os_error_line(exc)])
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _say(lines: list[str]) -> None:
    sys.stdout.flush()  # what the command printed before it failed comes first
    sys.stderr.write("\n".join(lines) + "\n")


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
    if args and args[0] == "git-guard":
        # git's own arguments follow: no parser of ours may read them.
        from swarmforge.git import guard

        return guard.main(args[1:])
    from swarmforge.cli.parser import run

    return run(args)
