"""Starting what runs a claimed task, and turning how it ended into an `Ended`.

Five kinds of flight: a role task's handoff is delivered to its role; a
background task starts detached and reports through its report file; a plain
command runs through the spawner; an isolated command runs in a worktree of its
own on a worker thread; with workers on other hosts (`remote`), a command task
is published for them instead (remote/sender.py). The orchestrator journals; this only
starts and reaps.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from swarmforge import tagging
from swarmforge.ports import assign_ports, project_identity
from swarmforge.run import commandtask, roletask
from swarmforge.run.background import start_background
from swarmforge.run.external import Ended
from swarmforge.run.levels import Flight, Task
from swarmforge.run.outcome import Outcome
from swarmforge.run.spawned import Child
from swarmforge.run.spawner import Spawner

if TYPE_CHECKING:
    from swarmforge.run.remote.sender import Remote

TASK_VAR = "SWARMFORGE_TASK"
Record = Callable[..., None]


def must_wait(flight: Flight) -> bool:
    """True if the task may start only once the journal is durable up to its claim."""
    task = flight.level.tasks[flight.task_id]
    return flight.kind != "pool" or task.isolate or bool(task.dependsOn)


class Starter:
    """Starts the flights of one open run."""

    def __init__(
        self,
        root: str,
        run_id: str,
        *,
        tasks: list[Task],
        reports: str,
        reported: set[str],
        spawner: Spawner,
        pool: ThreadPoolExecutor,
        done: queue.Queue[Ended],
        record: Record,
        remote: Remote | None = None,
    ) -> None:
        self.root = root
        self.run_id = run_id
        self.env = {
            **os.environ,
            tagging.RUN_TAG: run_id,
            tagging.PROJECT_TAG: root,
            tagging.SCOPE_TAG: tagging.PLANNED_RUN,  # a session's `down` leaves it alone
        }
        self.reports = reports
        self.ports = assign_ports(
            (f"swarm/{run_id}/{t.id}" for t in tasks if t.isolate), project_identity(root)
        )
        self.reported = reported  # tasks with a report from an earlier life of the run
        self.spawner = spawner
        self.pool = pool
        self.done = done  # where worker threads hand over how their task ended
        self.record = record
        self.remote = remote  # the workers on other hosts that command tasks go to
        if remote is not None:
            remote.start(done, spawner.wake, reports)

    def kind(self, task: Task) -> str:
        """The kind of flight a claimed command task becomes."""
        if task.background:
            return "background"
        return "remote" if self.remote is not None else "pool"

    def attempt(self, flight: Flight) -> str | None:
        """What the claim of `flight` is journaled with: a remote task's new attempt."""
        return (
            self.remote.claim(flight.task_id) if self.remote and flight.kind == "remote" else None
        )

    def rejoin(self, flight: Flight, attempt: int | None) -> None:
        """Wait again for the attempt a remote task was journaled running with."""
        assert self.remote is not None and attempt is not None
        self.remote.rejoin(flight, attempt, self._port(flight.task_id))

    def _port(self, task_id: str) -> int | None:
        return self.ports.get(f"swarm/{self.run_id}/{task_id}")

    def launch(self, flight: Flight, text: str) -> int | None:
        """Start what runs claimed `flight` (`text`: what a role is asked); the pid of a
        background task, which the orchestrator journals, else None."""
        task = flight.level.tasks[flight.task_id]
        flight.launched = True
        if flight.kind == "role" and task.role and flight.handoff:
            self.deliver(task, flight.handoff, text)
        elif flight.kind == "background" and task.command:
            env = {**self.env, TASK_VAR: task.id}
            flight.pid = start_background(
                task.id, task.command, cwd=self.root, env=env, reports=self.reports
            )
            return flight.pid
        elif flight.kind == "remote" and self.remote is not None:
            self.remote.dispatch(flight, self._port(task.id))
        elif flight.kind == "pool" and task.command and not task.isolate:
            self.spawner.start(
                flight, task.command, cwd=self.root, env=self.env, extra={TASK_VAR: task.id}
            )
        elif flight.kind == "pool":
            future = self.pool.submit(self._isolated, task, {**self.env, TASK_VAR: task.id})
            future.add_done_callback(lambda f: self._report(flight, f.exception() or f.result()))
        return None

    def deliver(self, task: Task, handoff: str, text: str) -> None:
        """Deliver role task `task`'s handoff named `handoff`, asking `text`, to its role."""
        assert task.role is not None
        entry = roletask.role_entry(self.root, task.role, task.id)
        roletask.deliver(entry, handoff, self.run_id, task.id, text, self.root)

    def ended(self, child: Child) -> Ended:
        """How a command task the spawner reaped ended, its report written."""
        flight = child.key
        assert isinstance(flight, Flight)
        command = flight.level.tasks[flight.task_id].command
        assert command is not None
        outcome = commandtask.ended(
            flight.task_id,
            command,
            cwd=self.root,
            reports=self.reports,
            code=child.code,
            out=bytes(child.out),
            err=bytes(child.err),
            error=child.error,
            first=flight.task_id not in self.reported,
        )
        return Ended(flight, outcome)

    def _report(self, flight: Flight, result: Outcome | BaseException) -> None:
        """Hand a worker thread's result to the loop (from that thread)."""
        self.done.put(Ended(flight, result))
        self.spawner.wake()

    def _isolated(self, task: Task, env: dict[str, str]) -> Outcome:
        assert task.command is not None
        return commandtask.run_isolated(
            self.root,
            self.run_id,
            task.id,
            task.command,
            env=env,
            reports=self.reports,
            port=self.ports[f"swarm/{self.run_id}/{task.id}"],
            on_worktree=lambda action, path, branch, rescued: self.record(
                "worktree", id=task.id, action=action, path=path, branch=branch, rescued=rescued
            ),
        )
