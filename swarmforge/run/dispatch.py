"""The dispatch loop of an open run: claiming the tasks that may start, starting them as
the journal allows, and journaling how they end.

Events are queued by the `recorder`, written at once and made durable by a background
group commit (`committer`). A plain command task starts as soon as its claim is
written: a killed orchestrator cannot lose a written event, and a task whose claim a
machine crash did lose is simply ready again, as an orphan would be. Whatever must not
be repeated blindly waits for the disk: a dependent starts only once its dependencies'
outcomes are durable, and background, role and isolated tasks only once their own
claim is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from swarmforge.run import external, reattach, roletask
from swarmforge.run.external import Ended
from swarmforge.run.flights import Flights
from swarmforge.run.journal.recorder import Recorder
from swarmforge.run.levels import Flight, Level, Task, subtasks_of
from swarmforge.run.openrun import OpenRun
from swarmforge.run.outcome import Outcome
from swarmforge.run.roletask import role_text
from swarmforge.run.starter import Starter, must_wait
from swarmforge.run.tasktree import TaskTree

POLL = 0.05
Progress = Callable[[str], None]


class Dispatch:
    """Claims, starts and completes the tasks of one open run until nothing can move."""

    def __init__(
        self,
        run: OpenRun,
        tree: TaskTree,
        recorder: Recorder,
        starter: Starter,
        flights: Flights,
        *,
        goal: str,
        progress: Progress,
    ) -> None:
        self.run = run
        self.tree = tree
        self.recorder = recorder
        self.starter = starter
        self.flights = flights
        self.goal = goal  # a role task is asked for it, unless its metadata says otherwise
        self.progress = progress

    def state(self, task_id: str, status: str, **extra: object) -> None:
        """Journal a task's new status."""
        self.recorder.record(
            "task-state",
            id=task_id,
            status=status,
            reason=extra.get("reason"),
            exitCode=extra.get("exitCode"),
            pid=extra.get("pid"),
        )

    # -- levels and resume --------------------------------------------------------------------

    def add_level(self, tasks: Sequence[Task], depth: int, parent: str | None) -> None:
        """Make a level, journal its tasks once, and take up its orphans."""
        grown = self.tree.grow(tasks, depth, parent)
        for task_id, reason in grown.parked.items():
            self.recorder.record("task-parked", id=task_id, reason=reason)
        for task_id, status in grown.enqueued:
            self.recorder.record("task-enqueued", id=task_id, status=status, parent=parent)
        for task_id, status, reason in grown.decided:
            self.state(task_id, status, reason=reason)
        self._reattach(grown.level)

    def _reattach(self, level: Level) -> None:
        """Tasks journaled running whose worker is gone: wait for their worker, or run again."""
        run = self.run
        for task_id in level.graph.demote_running():
            task = level.tasks[task_id]
            remote = run.remote is not None
            match reattach.orphan(task, run.journal.events, run.reports, run.root, remote):
                case reattach.Rejoin() as rejoin:
                    self._rejoin(level, task, rejoin)
                case reattach.Rerun():
                    self.state(task_id, "ready", reason="orphaned: will run again")

    def _rejoin(self, level: Level, task: Task, rejoin: reattach.Rejoin) -> None:
        if rejoin.redeliver and rejoin.handoff:
            self.starter.deliver(task, rejoin.handoff, role_text(self.goal, task))
        level.start(task.id)
        flight = Flight(
            level, task.id, rejoin.kind, rejoin.pid, rejoin.handoff, rejoin.role, launched=True
        )
        self.flights.fly(flight)
        if rejoin.kind == "remote":
            self.starter.rejoin(flight, rejoin.attempt)
        if rejoin.outcome is not None:
            self.flights.done.put(Ended(flight, rejoin.outcome))
        if rejoin.kind == "background":
            self.progress(f"re-attached background task {task.id}")

    # -- claim and start ----------------------------------------------------------------------

    def claim(self, level: Level, task_id: str) -> None:
        """Mark a task running and journal it (durable at the next flush, before `launch`)."""
        task = level.tasks[task_id]
        level.start(task_id)
        if subtasks_of(task):
            self.state(task_id, "running", reason="lead")
            self.add_level(subtasks_of(task), level.depth + 1, task_id)
        elif task.role:
            name = roletask.handoff_name(task.role, self.recorder.next_seq)
            self.state(task_id, "running", reason=f"handoff:{name}")
            self.flights.fly(Flight(level, task_id, "role", handoff=name, role=task.role))
        else:
            flight = Flight(level, task_id, self.starter.kind(task))
            self.state(task_id, "running", reason=self.starter.attempt(flight))
            self.flights.fly(flight)

    def launch(self, flight: Flight) -> None:
        """Start what runs a claimed task; a background task's pid is journaled."""
        task = flight.level.tasks[flight.task_id]
        pid = self.starter.launch(flight, role_text(self.goal, task))
        if pid is not None:
            self.state(flight.task_id, "running", pid=pid)

    def _release(self) -> None:
        """Start the held tasks whose journal records are durable by now."""
        for flight in self.flights.due(self.run.committer.durable):
            self.launch(flight)

    # -- the loop -----------------------------------------------------------------------------

    def complete(self, flight: Flight, result: Outcome | BaseException) -> None:
        """Journal how a task ended (its report already written) and promote its dependents."""
        status = "done" if not isinstance(result, BaseException) and result.ok else "failed"
        if isinstance(result, BaseException):
            self.state(flight.task_id, status, reason=f"worker error: {result}")
        else:
            self.state(flight.task_id, status, exitCode=result.exit_code)
        ok = status == "done"
        flight.level.finish(flight.task_id, ok)
        self.flights.land(flight.task_id)
        self.progress(f"{flight.task_id}: {'done' if ok else 'failed'}")

    def _finish_leads(self) -> None:
        """Journal the leads whose subtasks can move no further as done or failed."""
        for lead, ok in self.tree.finish_leads():
            self.state(lead, "done" if ok else "failed", reason="subtasks")
            self.progress(f"{lead}: {'done' if ok else 'failed'}")

    def loop(self) -> None:
        """Dispatch until nothing can move any more.

        One group commit per turn: the outcomes just reported and the tasks just
        claimed reach the journal together, outcomes first, before any of the claimed
        tasks starts. A dependent is claimed only after its dependency's outcome.
        """
        while True:
            self.run.committer.check()
            claimed = self._claim_startable()
            self._finish_leads()
            self.recorder.flush()
            self._start(claimed)
            flying = self.flights.flying
            if not claimed and not flying and not any(lv.startable() for lv in self.tree.levels):
                break
            self._complete_ended()

    def _claim_startable(self) -> list[str]:
        """Claim every task that may start now; their ids."""
        claimed = []
        for level in list(self.tree.levels):
            for task_id in level.startable():
                self.claim(level, task_id)
                claimed.append(task_id)
        return claimed

    def _start(self, claimed: list[str]) -> None:
        """Launch the just claimed tasks that need not wait for the disk; hold the others."""
        written = self.run.journal.written_seq
        for task_id in claimed:
            flight = self.flights.flying.get(task_id)
            if flight is None:
                continue  # a lead: its subtasks are claimed next turn
            if must_wait(flight):
                self.flights.hold(written, flight)
            else:
                self.launch(flight)
        self._release()
        if self.flights.holding():
            self.run.committer.kick(urgent=True)  # they wait for the disk, so skip the pause

    def _complete_ended(self) -> None:
        """Complete the tasks that ended, waiting up to POLL for a command task to end."""
        for child in self.run.spawner.wait(POLL):
            self.complete(*self.starter.ended(child))
        done = self.flights.done
        while not done.empty():  # this thread is the only one that takes
            self.complete(*done.get_nowait())
        if self.flights.outside:
            outside = list(self.flights.outside.values())
            for ended in external.ended(outside, self.run.reports, self.run.root):
                self.complete(*ended)
