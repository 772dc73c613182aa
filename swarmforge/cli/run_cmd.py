"""`swarmforge run SPEC`: start or resume a planned run; and `run-worker`, the detached
process of one of its background tasks."""

from __future__ import annotations

import argparse
import os
import sys

from swarmforge.cli.common import PLANNED, emit, planned_options, project_root
from swarmforge.errors import EXIT_FAILURE, EXIT_OK, SwarmforgeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from swarmforge.run.remote.sender import Workers
    from swarmforge.run.summary import RunSummary


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `run`."""
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
    planned_options(run)
    run.set_defaults(handler=_run)


def add_internal(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `run-worker`, the detached process of a background task (not for people)."""
    worker = sub.add_parser("run-worker")
    worker.add_argument("--reports", required=True)
    worker.add_argument("--task", required=True)
    worker.add_argument("--cwd", required=True)
    worker.add_argument("argv", nargs=argparse.REMAINDER)
    worker.set_defaults(handler=_worker)


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


def _worker(ns: argparse.Namespace) -> int:
    from swarmforge.run.background import background_main

    argv = ns.argv[1:] if ns.argv[:1] == ["--"] else ns.argv
    return background_main(ns.reports, ns.task, ns.cwd, argv)
