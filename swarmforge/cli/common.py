"""What the subcommands share: the `--project` option and how a command unwinds on SIGTERM."""

from __future__ import annotations

import argparse
import os
import signal

from swarmforge.errors import EXIT_SIGNALLED, SwarmforgeError


def project_option(p: argparse.ArgumentParser) -> None:
    """Add the `--project DIR` option every command that works on a project takes."""
    p.add_argument(
        "--project", metavar="DIR", help="the project (default: found from the current directory)"
    )


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(EXIT_SIGNALLED + signum)


def unwind_on_sigterm() -> None:
    """Make SIGTERM unwind this command as Ctrl-C does, so its clean-up runs."""
    signal.signal(signal.SIGTERM, _terminated)


def project_root(option: str | None) -> str:
    """The project: `--project DIR` as given, else the one found from the current directory."""
    if option:
        if not os.path.isdir(option):
            raise SwarmforgeError(f"--project {option}: no such directory.")
        return os.path.abspath(option)
    from swarmforge.roletable import find_root

    return find_root(os.getcwd())


def view_root(option: str | None) -> str:
    """The project a view or a status looks at: as `project_root`, or, before any `up`
    (no roles.tsv yet), the configured project, so that it can say no swarm runs there."""
    try:
        return project_root(option)
    except SwarmforgeError:
        return config_root(option)


def checkout_root(option: str | None) -> str:
    """`--project DIR`, else the git checkout of the current directory, else the directory
    itself: where planned runs live, which need no swarm configuration."""
    if option:
        return os.path.realpath(option)
    from swarmforge.roletable import worktree_top

    top = worktree_top(os.getcwd())
    return os.path.realpath(top if top is not None else os.getcwd())


def config_root(option: str | None) -> str:
    """`--project DIR`, else the nearest directory at or above this one with a swarmforge.conf."""
    if option:
        return project_root(option)
    here = os.getcwd()
    while True:
        if os.path.isfile(os.path.join(here, "swarmforge", "swarmforge.conf")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            raise SwarmforgeError(
                f"No swarmforge/swarmforge.conf here or above {os.getcwd()}.",
                hint="Run `swarmforge init` first.",
            )
        here = parent
