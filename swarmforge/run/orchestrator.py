"""The orchestrator of a planned run: dispatch, journal, resume.

Journal before the side effect, outcome after persistence: a task is
journaled `running` before its worker starts, and `done`/`failed` only after
its report is written. A run resumed after a crash re-runs the tasks that were
running (at-least-once) and never a task that ended.

Events are queued by the `recorder`, written at once and made durable by a
background group commit (`committer`). A plain command task starts as soon as
its claim is written: a killed orchestrator cannot lose a written event, and a
task whose claim a machine crash did lose is simply ready again, as an orphan
would be. Whatever must not be repeated blindly waits for the disk: a dependent
starts only once its dependencies' outcomes are durable, and background, role
and isolated tasks only once their own claim is.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from swarmforge.events import EventLog
from swarmforge.layout import RUNS_DIR
from swarmforge.locks import FileLock
from swarmforge.run import external, overview, reattach, roletask
from swarmforge.run.external import Ended
from swarmforge.run.journal.checkpoint import CHECKPOINT
from swarmforge.run.journal.committer import Committer
from swarmforge.run.journal.file import EVENTS, Journal
from swarmforge.run.journal.recorder import Recorder
from swarmforge.run.journal.replay import resume_states
from swarmforge.run.levels import Flight, Level, Task, subtasks_of
from swarmforge.run.outcome import Outcome
from swarmforge.run.parking import ledgers, rules
from swarmforge.run.parking.decisions import decisions
from swarmforge.run.preflight import preflight
from swarmforge.run.remote.connect import remote_for
from swarmforge.run.report.files import reported_tasks
from swarmforge.run.roletask import role_text
from swarmforge.run.spawner import Spawner
from swarmforge.run.spec.runspec import RunSpec, canonical_json, flatten, run_id
from swarmforge.run.starter import Starter, must_wait
from swarmforge.run.summary import RunSummary, summary

if TYPE_CHECKING:
    from swarmforge.run.remote.sender import Remote, Workers

POLL = 0.05
Progress = Callable[[str], None]
_T = TypeVar("_T")


def runs_dir(root: str) -> str:
    """Where the project's planned runs live."""
    return os.path.join(root, RUNS_DIR)


class Orchestrator:
    """Runs (or resumes) one planned run of the project at `root`."""

    def __init__(
        self,
        root: str,
        spec: RunSpec,
        *,
        max_concurrency: int | None = None,
        progress: Progress | None = None,
        workers: Workers | None = None,
    ) -> None:
        self.root = os.path.realpath(root)
        self.workers = workers  # command tasks go to workers on other hosts (remote/sender.py)
        self.spec = spec
        self.run_id = run_id(spec)
        self.dir = os.path.join(runs_dir(self.root), self.run_id)
        self.reports = os.path.join(self.dir, "reports")
        self.limit = max_concurrency or spec.maxConcurrency
        self.progress = progress or (lambda m: None)
        # Tasks that ended out of the loop's thread (worker threads, re-attached reports).
        self.done: queue.Queue[Ended] = queue.Queue()
        self.flights: dict[str, Flight] = {}
        self.outside: dict[str, Flight] = {}  # the background and role ones among them
        self.levels: list[Level] = []
        self.children: dict[str, Level] = {}
        # Claimed tasks waiting for the journal to be durable up to a seq before they start.
        self.held: list[tuple[int, Flight]] = []
        # What `run` finds and opens under the run's lock.
        self.resumed: dict[str, str] = {}  # every task's status as the journal left it
        self.reported: set[str] = set()  # tasks with a report from an earlier life of the run
        self._journal: Journal | None = None
        self._committer: Committer | None = None
        self._spawner: Spawner | None = None
        self._launcher: Starter | None = None
        self._recorder: Recorder | None = None
        self._remote: Remote | None = None

    @property
    def journal(self) -> Journal:
        """The run's journal (open while `run` runs)."""
        return _opened(self._journal)

    @property
    def committer(self) -> Committer:
        """The group commit that makes the journal durable (while `run` runs)."""
        return _opened(self._committer)

    @property
    def spawner(self) -> Spawner:
        """What starts and reaps command tasks (while `run` runs)."""
        return _opened(self._spawner)

    @property
    def recorder(self) -> Recorder:
        """What takes the run's events to its journal (while `run` runs)."""
        return _opened(self._recorder)

    @property
    def starter(self) -> Starter:
        """What starts the claimed tasks (while `run` runs)."""
        return _opened(self._launcher)

    def _all(self) -> list[Task]:
        return [task for _, task, _ in flatten(self.spec)]

    # -- journal ------------------------------------------------------------------------------

    def record(self, kind: str, **fields: object) -> None:
        """Queue one event for the next flush (safe from worker threads)."""
        self.recorder.record(kind, **fields)

    def states(self) -> dict[str, str]:
        """Every task's status: those of live levels over what the journal said."""
        merged = dict(self.resumed)
        for level in self.levels:
            merged.update(level.graph.statuses())
        return merged

    def state(self, task_id: str, status: str, **extra: object) -> None:
        """Journal a task's new status."""
        self.record(
            "task-state",
            id=task_id,
            status=status,
            reason=extra.get("reason"),
            exitCode=extra.get("exitCode"),
            pid=extra.get("pid"),
        )

    # -- levels and resume --------------------------------------------------------------------

    def level(self, tasks: Sequence[Task], depth: int, parent: str | None) -> Level:
        """Make a level, journal its tasks once, and bring it up to date with the journal."""
        level = Level(
            tasks,
            depth=depth,
            limit=self.limit,
            ramp=self.spec.ramp,
            parent=parent,
            parked=self._park(tasks),
        )
        for task in tasks:
            if not self.journal.was_enqueued(task.id):
                self.record(
                    "task-enqueued", id=task.id, status=level.graph.status(task.id), parent=parent
                )
        level.restore(self.resumed, os.path.join(self.dir, CHECKPOINT), EVENTS)
        self.levels.append(level)
        self._carry_out_decisions(level)
        self._reattach(level)
        return level

    def _park(self, tasks: Sequence[Task]) -> set[str]:
        """The ids among `tasks` that wait for a decision; the new ones are parked and journaled."""
        waiting = rules.waiting(tasks, ledgers.approved(self.dir))
        known = ledgers.parked(self.dir)
        for task_id, reason in waiting.items():
            if task_id not in known:
                ledgers.park(self.dir, task_id, reason)
                self.record("task-parked", id=task_id, reason=reason)
        return set(waiting)

    def _carry_out_decisions(self, level: Level) -> None:
        """Let run the parked tasks a human approved since, and fail the rejected ones."""
        approved, rejected = ledgers.approved(self.dir), ledgers.rejected(self.dir)
        for decision in decisions(level.graph.statuses(), approved, rejected):
            status, reason = level.decide(decision.task_id, decision.verdict)
            self.state(decision.task_id, status, reason=reason)

    def _reattach(self, level: Level) -> None:
        """Tasks journaled running whose worker is gone: wait for their worker, or run again."""
        for task_id in level.graph.demote_running():
            task = level.tasks[task_id]
            remote = self.workers is not None
            match reattach.orphan(task, self.journal.events, self.reports, self.root, remote):
                case reattach.Rejoin() as rejoin:
                    self._rejoin(level, task, rejoin)
                case reattach.Rerun():
                    self.state(task_id, "ready", reason="orphaned: will run again")

    def _rejoin(self, level: Level, task: Task, rejoin: reattach.Rejoin) -> None:
        if rejoin.redeliver and rejoin.handoff:
            self.starter.deliver(task, rejoin.handoff, role_text(self.spec.goal, task))
        level.start(task.id)
        flight = Flight(
            level, task.id, rejoin.kind, rejoin.pid, rejoin.handoff, rejoin.role, launched=True
        )
        self.fly(flight)
        if rejoin.kind == "remote":
            self.starter.rejoin(flight, rejoin.attempt)
        if rejoin.outcome is not None:
            self.done.put(Ended(flight, rejoin.outcome))
        if rejoin.kind == "background":
            self.progress(f"re-attached background task {task.id}")

    # -- dispatch -----------------------------------------------------------------------------

    def claim(self, level: Level, task_id: str) -> None:
        """Mark a task running and journal it (durable at the next flush, before `launch`)."""
        task = level.tasks[task_id]
        level.start(task_id)
        if subtasks_of(task):
            self.state(task_id, "running", reason="lead")
            self.children[task_id] = self.level(subtasks_of(task), level.depth + 1, task_id)
        elif task.role:
            name = roletask.handoff_name(task.role, self.recorder.next_seq)
            self.state(task_id, "running", reason=f"handoff:{name}")
            self.fly(Flight(level, task_id, "role", handoff=name, role=task.role))
        else:
            flight = Flight(level, task_id, self.starter.kind(task))
            self.state(task_id, "running", reason=self.starter.attempt(flight))
            self.fly(flight)

    def fly(self, flight: Flight) -> None:
        """Wait for the end of a claimed task."""
        self.flights[flight.task_id] = flight
        if flight.kind in ("background", "role"):
            self.outside[flight.task_id] = flight

    def launch(self, flight: Flight) -> None:
        """Start what runs a claimed task; a background task's pid is journaled."""
        task = flight.level.tasks[flight.task_id]
        pid = self.starter.launch(flight, role_text(self.spec.goal, task))
        if pid is not None:
            self.state(flight.task_id, "running", pid=pid)

    def _durable(self) -> None:
        """The journal reached the disk a little further (from the committer's thread)."""
        if self.held:
            self.spawner.wake()  # one may start now; else the loop need not wake for this

    def _release(self) -> None:
        """Start the held tasks whose journal records are durable by now."""
        if not self.held:
            return
        durable = self.committer.durable
        ready = [flight for seq, flight in self.held if seq <= durable]
        self.held = [(seq, flight) for seq, flight in self.held if seq > durable]
        for flight in ready:
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
        self.flights.pop(flight.task_id, None)
        self.outside.pop(flight.task_id, None)
        self.progress(f"{flight.task_id}: {'done' if ok else 'failed'}")

    def _finish_leads(self) -> None:
        for lead, child in list(self.children.items()):
            if not child.stuck():
                continue
            ok = child.lead_ok()
            if ok is None:
                continue  # a subtask waits for approval: the lead waits with it
            parent = next(lv for lv in self.levels if lead in lv.tasks)
            self.state(lead, "done" if ok else "failed", reason="subtasks")
            parent.finish(lead, ok)
            del self.children[lead]
            self.progress(f"{lead}: {'done' if ok else 'failed'}")

    def loop(self) -> None:
        """Dispatch until nothing can move any more.

        One group commit per turn: the outcomes just reported and the tasks just
        claimed reach the journal together, outcomes first, before any of the claimed
        tasks starts. A dependent is claimed only after its dependency's outcome.
        """
        while True:
            self.committer.check()
            claimed = self._claim_startable()
            self._finish_leads()
            self.recorder.flush()
            self._start(claimed)
            if not claimed and not self.flights and not any(lv.startable() for lv in self.levels):
                break
            self._complete_ended()

    def _claim_startable(self) -> list[str]:
        """Claim every task that may start now; their ids."""
        claimed = []
        for level in list(self.levels):
            for task_id in level.startable():
                self.claim(level, task_id)
                claimed.append(task_id)
        return claimed

    def _start(self, claimed: list[str]) -> None:
        """Launch the just claimed tasks that need not wait for the disk; hold the others."""
        written = self.journal.written_seq
        for task_id in claimed:
            flight = self.flights.get(task_id)
            if flight is None:
                continue  # a lead: its subtasks are claimed next turn
            if must_wait(flight):
                self.held.append((written, flight))
            else:
                self.launch(flight)
        self._release()
        if self.held:
            self.committer.kick(urgent=True)  # they wait for the disk, so skip the pause

    def _complete_ended(self) -> None:
        """Complete the tasks that ended, waiting up to POLL for a command task to end."""
        for child in self.spawner.wait(POLL):
            self.complete(*self.starter.ended(child))
        while not self.done.empty():  # this thread is the only one that takes
            self.complete(*self.done.get_nowait())
        if self.outside:
            for ended in external.ended(list(self.outside.values()), self.reports, self.root):
                self.complete(*ended)

    def run(self) -> RunSummary:
        """Start or resume the run; returns when nothing can move any more."""
        preflight(self.root, self.run_id, self._all())
        os.makedirs(self.reports, exist_ok=True)
        with FileLock(os.path.join(self.dir, "orchestrator.lock"), what=f"run {self.run_id}"):
            overview.keep_spec(self.dir, canonical_json(self.spec))
            self.resumed, self._journal = resume_states(self.dir, sole=True)
            # Tasks with a report from an earlier life of the run (listed under the run's
            # lock): one listing spares every other task a look for a stale one.
            self.reported = reported_tasks(self.reports)
            try:
                with (
                    Spawner() as self._spawner,
                    Committer(self.journal, self._durable) as self._committer,
                    remote_for(
                        self.root, self.run_id, self.workers, self.journal.events, self.progress
                    ) as self._remote,
                ):
                    self._recorder = Recorder(
                        self.dir,
                        self.journal,
                        self.committer,
                        self.states,
                        copy_to=(EventLog(self.root), self.run_id),
                    )
                    return self._run()
            finally:
                self.journal.close()

    def _run(self) -> RunSummary:
        fresh = not self.journal.events
        if fresh:
            self.record(
                "run-started", runId=self.run_id, goal=self.spec.goal, tasks=len(self._all())
            )
        else:
            self.record("run-resumed", runId=self.run_id)
        self.progress(f"{'starting' if fresh else 'resuming'} run {self.run_id}")
        # Threads only for isolated tasks, whose worktrees take a while to make and remove.
        with ThreadPoolExecutor(max_workers=max(8, 2 * self.limit)) as pool:
            self._launcher = Starter(
                self.root,
                self.run_id,
                tasks=self._all(),
                reports=self.reports,
                reported=self.reported,
                spawner=self.spawner,
                pool=pool,
                done=self.done,
                record=self.record,
                remote=self._remote,
            )
            self.level(list(self.spec.tasks), 1, None)
            self.recorder.flush()
            self.loop()
        result = summary(self.run_id, self.dir, self.spec.goal, self.states(), self.children)
        self.record("run-finished", counts=result.counts, ok=result.ok)
        self.recorder.flush()
        self.recorder.checkpoint()
        self.committer.wait(self.journal.written_seq)
        return result


def _opened(thing: _T | None) -> _T:
    """`thing`, which only an open run has."""
    assert thing is not None, "the run is not open: only `run` opens it"
    return thing
