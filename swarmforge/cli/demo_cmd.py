"""`swarmforge demo`: watch a whole swarm work on a throw-away project."""

from __future__ import annotations

import argparse
import shlex
import sys

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_FAILURE, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from swarmforge.rehearse.demo.report import DemoReport


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `demo`."""
    demo = sub.add_parser(
        "demo",
        help="run a complete swarm on a throw-away project (no AI agent needed)",
        description="Make a small project in a new temporary directory (or in DIR, which "
        "must be new or empty), run a coder and a QA role on it as headless commands, "
        "print every handoff and stop.",
    )
    demo.add_argument(
        "--dir",
        metavar="DIR",
        help="where to make the project: a new or empty directory (default: a new "
        "temporary directory)",
    )
    demo.add_argument("--json", action="store_true", help="print the report as JSON")
    demo.set_defaults(handler=_demo)


def _times(row: dict[str, str | None]) -> str:
    return " ".join(
        str(row.get(k) or "-")[11:19]
        for k in ("created_at", "enqueued_at", "dequeued_at", "completed_at")
    )


def _demo(ns: argparse.Namespace) -> int:
    from swarmforge.rehearse.demo.play import run_demo

    def say(line: str) -> None:
        print(line, file=sys.stderr if ns.json else sys.stdout, flush=True)

    report = run_demo(ns.dir, say)
    emit(ns.json, report.as_json(), _report_lines(report))
    return EXIT_OK if report.ok else EXIT_FAILURE


def _report_lines(report: DemoReport) -> Iterator[str]:
    """The audit trail, each role's counts, and where the project is left."""
    yield "\naudit trail (UTC times: created enqueued dequeued completed):"
    for row in report.handoffs:
        what = row["message"] or f"{row['task']} @ {row['commit']}"
        yield (
            f"  {row['from']:>6} -> {row['recipient']:<6} p{row['priority']}  {_times(row)}  "
            f"{row['outcome'] or row['state']:<9}  {what}"
        )
    yield "\nroles:"
    for role in report.roles:
        yield (
            f"  {role.role:<6} received {role.received}, completed {role.completed}, "
            f"failed {role.failed}, sent {role.sent}, {role.commits} commit(s) on "
            f"{role.branch} (port {role.port})"
        )
    verdict = "the swarm did its work" if report.ok else "FAILED: see the logs"
    yield f"\n{verdict}. {farewell(report.project, report.made_directory)}"


def farewell(project: str, made: bool) -> str:
    """Where the project is left, and how to remove only what the demo made there."""
    where = (
        f"The project is left at {project}: its worktrees are in .worktrees/, the handoffs "
        "in each worktree's .swarmforge/handoffs/, the logs in .swarmforge/logs/."
    )
    if made:
        return f"{where} Remove it with: rm -rf {shlex.quote(project)}"
    # The directory was the user's (empty when the demo began): only its content goes.
    return (
        f"{where} Everything in it was made by the demo; empty it again with: "
        f"find {shlex.quote(project)} -mindepth 1 -delete"
    )
