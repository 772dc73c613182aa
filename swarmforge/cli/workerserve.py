"""A planned-run worker at work: connected to the server, its jobs side by side, stopped by
its signal handlers, and what it does printed as lines of text or JSON."""

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
from swarmforge.errors import EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from swarmforge.config.transportsettings import TransportSettings
    from swarmforge.run.remote.worker import Handled, Worker


def serve(
    ns: argparse.Namespace, settings: TransportSettings, credentials: str | None, directory: str
) -> int:
    """Serve as `ns` asks, with a clone in `directory`, until stopped or done."""
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
