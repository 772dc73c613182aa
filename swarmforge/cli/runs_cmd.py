"""`swarmforge runs list` and `tail`: the project's planned runs and each one's journal."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from swarmforge.cli.common import PLANNED, emit, planned_options, project_root
from swarmforge.errors import EXIT_OK, SwarmforgeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from swarmforge.run.overview import RunView


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `runs list` and `tail`."""
    runs = sub.add_parser("runs", help="the project's planned runs")
    actions = runs.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list runs with their task counts")
    planned_options(listing)
    listing.set_defaults(handler=_list)
    tail = sub.add_parser("tail", help="print a run's journal; -f follows it")
    tail.add_argument("run", help="run id (or a unique prefix)")
    tail.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    planned_options(tail)
    tail.set_defaults(handler=_tail)


def find_run(root: str, wanted: str) -> str:
    """The directory of the run `wanted` names, in full or by a unique prefix."""
    from swarmforge.run.orchestrator import runs_dir

    base = Path(runs_dir(root))
    names = sorted(p.name for p in base.iterdir()) if base.is_dir() else []
    matches = [n for n in names if n == wanted] or [n for n in names if n.startswith(wanted)]
    if len(matches) != 1:
        found = "no run" if not matches else f"{len(matches)} runs"
        raise SwarmforgeError(
            f"'{wanted}' matches {found} in {base}.", hint="`swarmforge runs list` shows them."
        )
    return str(base / matches[0])


def _list(ns: argparse.Namespace) -> int:
    from swarmforge import text
    from swarmforge.run import overview

    root = os.path.realpath(project_root(ns.project, PLANNED, must_exist=False))
    # Read only: listing runs never writes, even to a journal with a torn tail.
    found = overview.runs(root)
    rows = [
        {
            "runId": run.run_id,
            "goal": run.goal,
            "counts": run.counts,
            "finished": run.finished,
            "events": run.events,
        }
        for run in found
    ]
    # A spec's goal is outside text: its control characters are shown as escapes.
    said = [text.shown(_run_line(run)) for run in found]
    emit(ns.json, rows, said or [f"no planned run in {root} yet: `swarmforge run SPEC` starts one"])
    return EXIT_OK


def _run_line(run: RunView) -> str:
    counts = ", ".join(f"{n} {s}" for s, n in sorted(run.counts.items()))
    return f"{run.run_id}  {'finished' if run.finished else 'open    '}  {counts}  {run.goal}"


def _event_line(data: dict[str, object]) -> str:
    from swarmforge import text
    from swarmforge.eventline import words

    # Nested values (a checkpoint's states, a summary's counts) as compact JSON, lists as a,b.
    rest = " ".join(f"{k}={words(v)}" for k, v in data.items() if k not in ("seq", "ts", "kind"))
    # A goal or a reason is outside text: its control characters are shown as escapes.
    return text.shown(f"{data['seq']:>6} {data['ts']} {data['kind']:14s} {rest}".rstrip())


def _tail(ns: argparse.Namespace) -> int:
    from swarmforge.run.journal.file import read_events

    run_dir = Path(
        find_run(os.path.realpath(project_root(ns.project, PLANNED, must_exist=False)), ns.run)
    )
    path = str(run_dir / "events.jsonl")
    shown = 0
    while True:
        events, _ = read_events(path)
        for event in events[shown:]:
            data = event.model_dump(mode="json", exclude_none=True)
            emit(ns.json, data, _event_line(data), line=True, flush=True)
        shown = len(events)
        if not ns.follow:
            return EXIT_OK
        time.sleep(0.2)
