"""`swarmforge worker`: run the tasks of planned runs sent to workers (`run --workers`) here."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_OK, SwarmforgeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from swarmforge.config.transportsettings import TransportSettings
    from swarmforge.run.remote.worker import Handled, Worker


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


def _settings(ns: argparse.Namespace) -> tuple[TransportSettings | None, str | None]:
    """The `[transport]` of the project around the current directory, and its root."""
    if ns.nats and ns.hub and ns.project:
        return None, None  # everything given: a worker needs no project
    from swarmforge.cli.common import project_root
    from swarmforge.config.settings import load_settings
    from swarmforge.projectroot import CHECKOUT, HERE

    try:
        root = os.path.realpath(project_root(None, (CHECKOUT, HERE)))
    except SwarmforgeError:
        return None, None
    return load_settings(root).transport, root


def _options(ns: argparse.Namespace) -> tuple[TransportSettings, str | None]:
    """The server, hub and project to work for, and the credentials file if any."""
    from pydantic import ValidationError

    from swarmforge.config.transportsettings import TransportSettings
    from swarmforge.net.subjects import project_id

    found, root = _settings(ns)
    url = ns.nats or (found.url if found else None)
    hub = ns.hub or (found.hub if found else None)
    if not url or not hub:
        missing = "--nats" if not url else "--hub"
        raise SwarmforgeError(
            f"swarmforge worker needs {missing}: give it, or run it inside a project whose "
            "swarmforge/swarmforge.toml has a [transport] table with url and hub."
        )
    project = ns.project or (found.project if found else None)
    try:
        settings = TransportSettings(url=url, hub=hub, project=project)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise SwarmforgeError(f"--{_flag(error['loc'])}: {error['msg']}") from None
    settings = settings.model_copy(update={"project": project_id(settings)})
    credentials = ns.credentials
    if credentials is None and found is not None and root is not None:
        credentials = found.credentials_path(root)
    return settings, credentials


def _flag(loc: tuple[int | str, ...]) -> str:
    name = str(loc[0]) if loc else "nats"
    return {"url": "nats"}.get(name, name)


def _worker(ns: argparse.Namespace) -> int:
    from swarmforge.locks import FileLock

    if ns.max_tasks is not None and ns.max_tasks < 1:
        raise SwarmforgeError(f"--max-tasks must be at least 1, not {ns.max_tasks}.")
    if ns.jobs < 1:
        raise SwarmforgeError(f"--jobs must be at least 1, not {ns.jobs}.")
    if ns.jobs > 1 and (ns.once or ns.max_tasks is not None):
        raise SwarmforgeError("--once and --max-tasks count tasks one at a time: leave out --jobs.")
    _check_labels(ns.label)
    settings, credentials = _options(ns)
    assert settings.project is not None and settings.hub is not None
    directory = os.path.abspath(ns.dir or _default_dir(settings.project))
    os.makedirs(directory, exist_ok=True)
    with FileLock(os.path.join(directory, "worker.lock"), f"a worker in {directory}", 0):
        return _serve(ns, settings, credentials, directory)


def _serve(
    ns: argparse.Namespace, settings: TransportSettings, credentials: str | None, directory: str
) -> int:
    from swarmforge.net.transport import Transport
    from swarmforge.run.remote.clone import Clone
    from swarmforge.run.remote.taskqueue import TaskQueue
    from swarmforge.run.remote.worker import Worker

    assert settings.project is not None and settings.hub is not None
    login = settings.user_password() if credentials is None else None
    transport = Transport(
        settings.url,
        settings.project,
        user=login[0] if login else None,
        password=login[1] if login else None,
        credentials=credentials,
    )
    clone = Clone(directory, settings.hub)
    workers: list[Worker] = []
    transport.connect()
    try:
        queue = TaskQueue(transport)
        queue.ensure()
        clone.check_hub()
        clone.ensure()
        host = socket.gethostname()
        name = ns.name or f"{host}:{os.getpid()}"
        workers += [
            Worker(
                queue,
                clone,
                labels=frozenset(ns.label),
                name=name if ns.jobs == 1 else f"{name}/{job}",
                host=host,
                say=lambda m: print(m, file=sys.stderr, flush=True),
            )
            for job in range(1, ns.jobs + 1)
        ]

        def stop() -> None:
            for worker in workers:
                worker.request_stop()

        _on_stop(stop, ns.json)
        _ready(ns, name, settings.project, clone.path)
        show = lambda done: _show(done, ns.json)  # noqa: E731
        if len(workers) == 1:
            workers[0].serve(1 if ns.once else ns.max_tasks, show)
        else:
            _side_by_side(workers, show)
    finally:
        for worker in workers:
            worker.close()
        clone.clear_scratch()
        transport.close()
    return EXIT_OK


def _side_by_side(workers: list[Worker], show: Callable[[Handled], None]) -> None:
    """Serve with every job on a thread of its own until each has stopped.

    The main thread only waits, in short steps, so that the signal handlers (which
    run on it) are heard; a job that fails stops the others, and its error is raised.
    """
    failed: list[BaseException] = []

    def job(worker: Worker) -> None:
        try:
            worker.serve(None, show)
        except BaseException as exc:
            failed.append(exc)
            for other in workers:
                other.request_stop()
                other.request_stop()  # hand back what the others hold: this worker ends

    threads = [threading.Thread(target=job, args=(w,), name=w.name) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)
    if failed:
        raise failed[0]


def _check_labels(labels: list[str]) -> None:
    from swarmforge.run.spec.labels import label_problem

    for label in labels:
        problem = label_problem(label)
        if problem:
            raise SwarmforgeError(f"--label: {problem}")


def _default_dir(project: str) -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "swarmforge", "worker", project)


def _on_stop(stop: object, as_json: bool) -> None:
    """Signal handlers that only ask the worker to stop (and say so on the first)."""
    assert callable(stop)
    asked = []

    def handler(signum: int, frame: object) -> None:
        stop()
        asked.append(signum)
        if len(asked) == 1 and not as_json:
            print(
                "stopping once the task in hand is reported (again: hand it back now)",
                file=sys.stderr,
                flush=True,
            )

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def _ready(ns: argparse.Namespace, name: str, project: str, clone: str) -> None:
    labels = sorted(set(ns.label))
    state = {"event": "ready", "worker": name, "project": project, "labels": labels}
    held = ", ".join(labels) or "none"
    said = f"worker {name} ready: project {project}, labels {held}, clone {clone}"
    emit(ns.json, {**state, "clone": clone}, said, line=True, flush=True)


def _show(done: Handled, as_json: bool) -> None:
    code = f" (exit {done.exit_code})" if done.exit_code is not None else ""
    detail = f": {done.detail}" if done.detail else ""
    again = f", delivery {done.delivered}" if done.delivered > 1 else ""
    said = (
        f"{done.run_id} {done.task_id} attempt {done.attempt}{again}: {done.outcome}{code}{detail}"
    )
    emit(as_json, {"event": "task", **asdict(done)}, said, line=True, flush=True)
