"""`swarmforge gc`: clean up after a runner that was killed, and with `--artifacts` the
build output of stopped roles' worktrees."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from swarmforge.cli.common import VIEWED, emit, project_json_options, project_root
from swarmforge.errors import EXIT_OK, SwarmforgeError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from swarmforge.swarm.artifacts.report import Sweep
    from swarmforge.swarm.cleanup import GcReport


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `gc`."""
    gc = sub.add_parser("gc", help="clean up after a runner that was killed")
    project_json_options(gc)
    gc.add_argument(
        "--artifacts",
        action="store_true",
        help="also remove git-ignored build output from stopped roles' worktrees",
    )
    gc.add_argument(
        "--dry-run",
        action="store_true",
        help="with --artifacts: list that output and change nothing",
    )
    gc.set_defaults(handler=_gc)


def _gc(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.cleanup import gc

    if ns.dry_run and not ns.artifacts:
        raise SwarmforgeError(
            "gc: --dry-run goes with --artifacts.",
            hint="Run `swarmforge gc --artifacts --dry-run`.",
        )
    report = gc(project_root(ns.project, VIEWED), artifacts=ns.artifacts, dry_run=ns.dry_run)
    emit(ns.json, report.as_json(), _gc_lines(report, ns.dry_run))
    return EXIT_OK


def _gc_lines(report: GcReport, dry_run: bool) -> Iterator[str]:
    """What gc ended, pruned and removed (nothing of it on a dry run), then the swept output."""
    done = [
        f"{verb} {len(items)} {what}"
        for verb, items, what in (
            ("ended", report.processes, "process(es)"),
            ("pruned", report.worktrees, "stale worktree registration(s)"),
            ("rolled back", report.rolled_back, "interrupted worktree creation(s)"),
            ("removed", report.cleared, "half-made worktree directory(ies)"),
        )
        if items
    ]
    if report.temporary_files:
        done.append(f"removed {report.temporary_files} temporary file(s) of killed helpers")
    alive = "the run is alive, its processes were left alone; " if report.live else ""
    if not dry_run:
        yield alive + ("; ".join(done) or "nothing to clean up")
        yield from (f"warning: {problem}" for problem in report.captures_failed)
    if report.artifacts is not None:
        yield from _sweep_lines(report.artifacts)


def _sweep_lines(found: Sweep) -> list[str]:
    """What `gc --artifacts` says: each path removed (or to be), what was left and why."""
    from swarmforge.swarm.disk import readable

    verb = "would remove" if found.dry_run else "removed"
    lines = [f"  {verb} {a.path} ({readable(a.bytes)})" for a in found.removed]
    lines += [f"  left {s.path} ({s.role}): {s.reason}" for s in found.skipped]
    lines += [f"  could not remove {s.path} ({s.role}): {s.reason}" for s in found.failed]
    total = f"{verb} {len(found.removed)} ignored path(s), {readable(found.bytes)}"
    return [f"build output of stopped roles: {total}", *lines]
