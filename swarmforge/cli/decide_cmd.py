"""`swarmforge approve|reject RUN TASK`: decide on a task a planned run parked."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from swarmforge.cli.common import PLANNED, emit, planned_options, project_root
from swarmforge.cli.runs_cmd import find_run
from swarmforge.errors import EXIT_OK


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `approve` and `reject`."""
    for name, text in (
        ("approve", "let a parked task run on the next resume"),
        ("reject", "refuse a parked task for good"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("run", help="run id (or a unique prefix)")
        p.add_argument("task", help="the parked task's id")
        if name == "reject":
            p.add_argument("--note", help="why")
        planned_options(p)
        p.set_defaults(handler=_decide, decision=name)


def _decide(ns: argparse.Namespace) -> int:
    from swarmforge.run.parking import ledgers

    run_dir = find_run(
        os.path.realpath(project_root(ns.project, PLANNED, must_exist=False)), ns.run
    )
    who = os.environ.get("USER") or os.environ.get("LOGNAME") or "unknown"
    if ns.decision == "reject":
        ledgers.reject(run_dir, ns.task, who, ns.note)
        word = "rejected"
    else:
        ledgers.approve(run_dir, ns.task, who)
        word = "approved; it runs when the run is resumed"
    decided = {"run": Path(run_dir).name, "task": ns.task, "decision": word}
    emit(ns.json, decided, f"{ns.task}: {word}")
    return EXIT_OK
