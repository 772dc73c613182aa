"""`swarmforge watch`: a live view of the swarm in this terminal (read-only).

With no swarm running the view still opens and says so, and shows the swarm once
`up` starts one: it is a window onto the project, not a client of a run.
"""

from __future__ import annotations

import argparse

from swarmforge.errors import EXIT_OK


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `watch`."""
    from swarmforge.cli.common import project_option

    watch = sub.add_parser(
        "watch",
        help="a live view of every role, its queue and work, and the latest events",
        description="A live, read-only view in this terminal: one row per role (agent state "
        "and since when, queue, item in hand, port, branch, commits ahead of the base "
        "branch, dirty files, tokens) and the latest events. On the selected role: o its "
        "output, d its diff, h its handoff in hand, a attach; ? lists the keys, q quits.",
    )
    project_option(watch)
    watch.set_defaults(handler=_watch)


def _watch(ns: argparse.Namespace) -> int:
    import os

    from swarmforge.cli.common import VIEWED, project_root
    from swarmforge.views.watch.app import WatchApp

    WatchApp(os.path.realpath(project_root(ns.project, VIEWED))).run()
    return EXIT_OK
