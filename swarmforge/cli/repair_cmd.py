"""`swarmforge repair`: return work stuck in process to its role's queue (swarm/repair/).

This module only parses and prints; what counts as stuck and how it moves is decided
in swarmforge/swarm/repair/.
"""

from __future__ import annotations

import argparse

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_OK, EXIT_REFUSED


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `repair`."""
    from swarmforge.cli.common import project_option

    repair = sub.add_parser(
        "repair",
        help="return work stuck in process, whose agent is gone or exited, to its queue",
        description="Find the tasks and batches in a role's inbox/in_process/ whose agent is "
        "gone or exited (every agent, when no swarm runs) and put them back in its "
        "inbox/new/, stamped requeued_at and requeue_count; of a half-done batch only the "
        "unfinished items. Exit 0 when nothing needed repair or all of it was repaired, 2 "
        "when something had to be left in place.",
    )
    repair.add_argument(
        "--dry-run", action="store_true", help="say what would be done, and change nothing"
    )
    repair.add_argument(
        "--older-than",
        metavar="D",
        help="also take back work in process longer than D (90s, 30m, 1h30m), "
        "even from an agent that is alive",
    )
    repair.add_argument("--json", action="store_true", help="print the result as JSON")
    project_option(repair)
    repair.set_defaults(handler=_repair)


def _repair(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root
    from swarmforge.swarm.repair.project import age_limit, repair

    age_limit(ns.older_than)  # a bad value is refused before the project is looked for
    report = repair(project_root(ns.project), dry_run=ns.dry_run, older_than=ns.older_than)
    said = [item.line(ns.dry_run) for item in report.repairs] or ["nothing to repair"]
    said += [f"warning: {problem}" for problem in report.captures_failed]
    emit(ns.json, report.as_json(), said)
    return EXIT_OK if report.ok else EXIT_REFUSED
