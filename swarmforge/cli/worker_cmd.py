"""`swarmforge worker`: run the tasks of planned runs sent to workers (`run --workers`) here."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from swarmforge.cli.workerserve import serve
from swarmforge.cli.workertransport import transport_options
from swarmforge.errors import SwarmforgeError


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `worker`."""
    p = sub.add_parser(
        "worker",
        help="run tasks of planned runs that `swarmforge run --workers` sends (any host)",
        description="Take command tasks of planned runs from the project's NATS server, "
        "run each in a checkout of this worker's own clone of the hub, push the task's "
        "branch to the hub and report how it ended. Ctrl-C or SIGTERM stops after the "
        "task in hand is reported; a second one hands that task back to another worker. "
        "Inside a project, --nats, --hub and the credentials default to its [transport].",
    )
    p.add_argument("--nats", metavar="URL", help="the NATS server, e.g. nats://host:4222")
    p.add_argument("--hub", metavar="URL", help="the git repository every host reaches")
    p.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="L",
        help="a label this worker holds (repeatable): it takes the tasks whose labels it all holds",
    )
    p.add_argument(
        "--dir", metavar="DIR", help="where its clone lives (default: ~/.cache/swarmforge/worker/P)"
    )
    p.add_argument(
        "--project",
        metavar="NAME",
        help="the project's name on the server (default: [transport] project, else a hash "
        "of --hub, as the orchestrator computes it)",
    )
    p.add_argument("--credentials", metavar="FILE", help="a NATS credentials file")
    p.add_argument("--name", help="how results name this worker (default: HOST:PID)")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run up to N tasks at a time (default 1), in checkouts of one clone",
    )
    p.add_argument("--once", action="store_true", help="handle one task, then exit")
    p.add_argument("--max-tasks", type=int, metavar="N", help="handle N tasks, then exit")
    p.add_argument("--json", action="store_true", help="print its state as JSON lines")
    p.set_defaults(handler=_worker)


def _worker(ns: argparse.Namespace) -> int:
    from swarmforge.locks import FileLock

    if ns.max_tasks is not None and ns.max_tasks < 1:
        raise SwarmforgeError(f"--max-tasks must be at least 1, not {ns.max_tasks}.")
    if ns.jobs < 1:
        raise SwarmforgeError(f"--jobs must be at least 1, not {ns.jobs}.")
    if ns.jobs > 1 and (ns.once or ns.max_tasks is not None):
        raise SwarmforgeError("--once and --max-tasks count tasks one at a time: leave out --jobs.")
    _check_labels(ns.label)
    settings, credentials = transport_options(ns)
    assert settings.project is not None and settings.hub is not None
    given = ns.dir or _default_dir(settings.project)
    directory = os.path.abspath(given)  # noqa: PTH100 - ".." dropped lexically; no symlink resolved
    clone = Path(directory)
    clone.mkdir(parents=True, exist_ok=True)
    with FileLock(str(clone / "worker.lock"), f"a worker in {directory}", 0):
        return serve(ns, settings, credentials, directory)


def _check_labels(labels: list[str]) -> None:
    from swarmforge.run.spec.labels import label_problem

    for label in labels:
        problem = label_problem(label)
        if problem:
            raise SwarmforgeError(f"--label: {problem}")


def _default_dir(project: str) -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache, "swarmforge", "worker", project)
