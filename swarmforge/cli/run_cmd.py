"""`swarmforge run`, `runs list`, `tail`, `approve`, `reject`: planned runs."""

from __future__ import annotations

import argparse
import os
import sys
import time

from swarmforge.cli.common import emit, project_root
from swarmforge.errors import EXIT_FAILURE, EXIT_OK, SwarmforgeError
from swarmforge.projectroot import CHECKOUT, HERE

# A planned run needs no swarm: its project is the enclosing checkout, or the directory.
PLANNED = (CHECKOUT, HERE)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from swarmforge.run.overview import RunView
    from swarmforge.run.remote.sender import Workers
    from swarmforge.run.summary import RunSummary


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the planned-run subcommands."""
    run = sub.add_parser(
        "run",
        help="start or resume a planned run of a JSON or TOML spec",
        description="Run the task DAG of SPEC; running the same spec again "
        "resumes the same run. Exits 1 if any task failed.",
    )
    run.add_argument("spec", help="the run spec (.json or .toml)")
    run.add_argument(
        "--max-concurrency", type=int, metavar="N", help="override the spec's maxConcurrency"
    )
    run.add_argument(
        "--workers",
        action="store_true",
        help="send the command tasks to `swarmforge worker`s through the project's [transport]",
    )
    run.add_argument(
        "--ack-wait",
        type=float,
        metavar="SECONDS",
        help="with --workers: how long a worker may stay silent before its task goes to "
        "another (default 30)",
    )
    _common(run)
    run.set_defaults(handler=_run)
    runs = sub.add_parser("runs", help="the project's planned runs")
    actions = runs.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list runs with their task counts")
    _common(listing)
    listing.set_defaults(handler=_list)
    tail = sub.add_parser("tail", help="print a run's journal; -f follows it")
    tail.add_argument("run", help="run id (or a unique prefix)")
    tail.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    _common(tail)
    tail.set_defaults(handler=_tail)
    for name, text in (
        ("approve", "let a parked task run on the next resume"),
        ("reject", "refuse a parked task for good"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("run", help="run id (or a unique prefix)")
        p.add_argument("task", help="the parked task's id")
        if name == "reject":
            p.add_argument("--note", help="why")
        _common(p)
        p.set_defaults(handler=_decide, decision=name)


def add_internal(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `run-worker`, the detached process of a background task (not for people)."""
    worker = sub.add_parser("run-worker")
    worker.add_argument("--reports", required=True)
    worker.add_argument("--task", required=True)
    worker.add_argument("--cwd", required=True)
    worker.add_argument("argv", nargs=argparse.REMAINDER)
    worker.set_defaults(handler=_worker)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--project",
        metavar="DIR",
        help="the project (default: the git checkout of the current directory)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _run(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import unwind_on_sigterm
    from swarmforge.run.orchestrator import Orchestrator
    from swarmforge.run.spec.file import load_spec

    if ns.max_concurrency is not None and ns.max_concurrency < 1:
        raise SwarmforgeError(f"--max-concurrency must be at least 1, not {ns.max_concurrency}.")
    spec = load_spec(ns.spec)
    root = os.path.realpath(project_root(ns.project, PLANNED, must_exist=False))
    workers = _workers(root, ns.ack_wait) if ns.workers else None
    if ns.ack_wait is not None and workers is None:
        raise SwarmforgeError("--ack-wait goes with --workers.")
    say = (lambda m: None) if ns.json else (lambda m: print(m, file=sys.stderr, flush=True))
    # SIGTERM unwinds the run as Ctrl-C does: the commands it started are killed, the
    # journal is synced and closed, and what was running runs again on the next resume.
    unwind_on_sigterm()
    result = Orchestrator(
        root, spec, max_concurrency=ns.max_concurrency, progress=say, workers=workers
    ).run()
    emit(ns.json, result.as_json(), _result_lines(result))
    return EXIT_OK if result.ok else EXIT_FAILURE


def _result_lines(result: RunSummary) -> Iterator[str]:
    """The count of each status, then each task that failed, is parked or waits."""
    counts = ", ".join(f"{n} {s}" for s, n in sorted(result.counts.items()))
    yield f"run {result.run_id}: {counts}"
    yield from (f"  failed: {task}" for task in result.failed)
    for task, reason in result.parked.items():
        yield f"  parked ({reason}): {task}  -> swarmforge approve {result.run_id} {task}"
    yield from (f"  waiting for parked subtasks: {task}" for task in result.waiting)


def _workers(root: str, ack_wait: float | None) -> Workers:
    """How the run reaches its workers: the project's [transport]."""
    from swarmforge.config.settings import load_settings, settings_path
    from swarmforge.run.remote.sender import Workers

    transport = load_settings(root).transport
    if transport is None:
        raise SwarmforgeError(
            f"--workers needs a [transport] table (url, hub) in {settings_path(root)}: "
            "the NATS server and the git hub the workers share."
        )
    if ack_wait is None:
        return Workers(transport)
    if not 1 <= ack_wait <= 3600:
        raise SwarmforgeError(f"--ack-wait must be 1 to 3600 seconds, not {ack_wait:g}.")
    return Workers(transport, ack_wait)


def _find_run(root: str, wanted: str) -> str:
    from swarmforge.run.orchestrator import runs_dir

    base = runs_dir(root)
    names = sorted(os.listdir(base)) if os.path.isdir(base) else []
    matches = [n for n in names if n == wanted] or [n for n in names if n.startswith(wanted)]
    if len(matches) != 1:
        found = "no run" if not matches else f"{len(matches)} runs"
        raise SwarmforgeError(
            f"'{wanted}' matches {found} in {base}.", hint="`swarmforge runs list` shows them."
        )
    return os.path.join(base, matches[0])


def _list(ns: argparse.Namespace) -> int:
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
    said = [_run_line(run) for run in found]
    emit(ns.json, rows, said or [f"no planned run in {root} yet: `swarmforge run SPEC` starts one"])
    return EXIT_OK


def _run_line(run: RunView) -> str:
    counts = ", ".join(f"{n} {s}" for s, n in sorted(run.counts.items()))
    return f"{run.run_id}  {'finished' if run.finished else 'open    '}  {counts}  {run.goal}"


def _event_line(data: dict[str, object]) -> str:
    from swarmforge.eventline import words

    # Nested values (a checkpoint's states, a summary's counts) as compact JSON, lists as a,b.
    rest = " ".join(f"{k}={words(v)}" for k, v in data.items() if k not in ("seq", "ts", "kind"))
    return f"{data['seq']:>6} {data['ts']} {data['kind']:14s} {rest}".rstrip()


def _tail(ns: argparse.Namespace) -> int:
    from swarmforge.run.journal.file import read_events

    path = os.path.join(
        _find_run(os.path.realpath(project_root(ns.project, PLANNED, must_exist=False)), ns.run),
        "events.jsonl",
    )
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


def _decide(ns: argparse.Namespace) -> int:
    from swarmforge.run.parking import ledgers

    run_dir = _find_run(
        os.path.realpath(project_root(ns.project, PLANNED, must_exist=False)), ns.run
    )
    who = os.environ.get("USER") or os.environ.get("LOGNAME") or "unknown"
    if ns.decision == "reject":
        ledgers.reject(run_dir, ns.task, who, ns.note)
        word = "rejected"
    else:
        ledgers.approve(run_dir, ns.task, who)
        word = "approved; it runs when the run is resumed"
    decided = {"run": os.path.basename(run_dir), "task": ns.task, "decision": word}
    emit(ns.json, decided, f"{ns.task}: {word}")
    return EXIT_OK


def _worker(ns: argparse.Namespace) -> int:
    from swarmforge.run.background import background_main

    argv = ns.argv[1:] if ns.argv[:1] == ["--"] else ns.argv
    return background_main(ns.reports, ns.task, ns.cwd, argv)
