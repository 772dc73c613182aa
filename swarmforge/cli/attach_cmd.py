"""`swarmforge attach [ROLE]`: this terminal into a role's tmux session, or all roles tiled."""

from __future__ import annotations

import argparse
import shlex

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_OK


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `attach`."""
    from swarmforge.cli.common import project_option

    attach = sub.add_parser(
        "attach",
        help="put this terminal into a role's tmux session (without ROLE: all roles tiled)",
        description="Attach this terminal to ROLE's live tmux session on the project's private "
        "tmux server, or, without ROLE, to one window that tiles every role's session. Inside "
        "tmux it opens a new window of your tmux instead. Detach with the tmux prefix and d: "
        "the swarm keeps running.",
    )
    attach.add_argument("role", metavar="ROLE", nargs="?", help="the role (default: all)")
    project_option(attach)
    shown = attach.add_mutually_exclusive_group()
    shown.add_argument(
        "--print", action="store_true", dest="print_only", help="print the command, do not run it"
    )
    shown.add_argument(
        "--json", action="store_true", help="print the command and its target as JSON instead"
    )
    attach.set_defaults(handler=_attach)


def _attach(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import VIEWED, project_root
    from swarmforge.views import attach

    plan = attach.plan(project_root(ns.project, VIEWED), ns.role)
    if ns.json or ns.print_only:
        emit(ns.json, plan.as_json(), shlex.join(plan.argv))
        return EXIT_OK
    attach.start(plan)  # outside tmux it does not return: tmux took this terminal over
    print(f"opened {plan.session} in a new window of your tmux session")
    return EXIT_OK
