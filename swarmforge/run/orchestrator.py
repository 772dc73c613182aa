"""The orchestrator of a planned run: opens it, dispatches its tasks, and sums it up.

Journal before the side effect, outcome after persistence: a task is journaled
`running` before its worker starts, and `done`/`failed` only after its report is
written. A run resumed after a crash re-runs the tasks that were running
(at-least-once) and never a task that ended. The run's resources are opened under its
lock (openrun.py), its levels kept in a task tree (tasktree.py), and its tasks claimed,
started and completed by the dispatch loop (dispatch.py).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge import statedir
from swarmforge.events import EventLog
from swarmforge.layout import RUNS_DIR
from swarmforge.run.dispatch import Dispatch, Progress
from swarmforge.run.flights import Flights
from swarmforge.run.journal.recorder import Recorder
from swarmforge.run.levels import Task
from swarmforge.run.openrun import OpenRun, open_run
from swarmforge.run.preflight import preflight
from swarmforge.run.spec.runspec import RunSpec, flatten, run_id
from swarmforge.run.starter import Starter
from swarmforge.run.summary import RunSummary, summary
from swarmforge.run.tasktree import TaskTree

if TYPE_CHECKING:
    from swarmforge.run.remote.sender import Workers


def runs_dir(root: str) -> str:
    """Where the project's planned runs live."""
    return statedir.path(root, RUNS_DIR)


class Orchestrator:
    """Runs (or resumes) one planned run of the project at `root`."""

    dispatch_class: type[Dispatch] = Dispatch  # a subclass may watch the loop

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
        run_dir = Path(runs_dir(self.root)) / self.run_id
        self.dir = str(run_dir)
        self.reports = str(run_dir / "reports")
        self.limit = max_concurrency or spec.maxConcurrency
        self.progress = progress or (lambda m: None)

    def _all(self) -> list[Task]:
        return [task for _, task, _ in flatten(self.spec)]

    def run(self) -> RunSummary:
        """Start or resume the run; returns when nothing can move any more."""
        preflight(self.root, self.run_id, self._all())
        Path(self.reports).mkdir(parents=True, exist_ok=True)
        flights = Flights()
        with open_run(
            self.root,
            self.spec,
            self.run_id,
            self.dir,
            workers=self.workers,
            say=self.progress,
            waiting=flights.holding,
        ) as run:
            return self._run(run, flights)

    def _run(self, run: OpenRun, flights: Flights) -> RunSummary:
        tree = TaskTree(run.dir, run.resumed, run.journal, limit=self.limit, ramp=self.spec.ramp)
        recorder = Recorder(
            run.dir,
            run.journal,
            run.committer,
            tree.states,
            copy_to=(EventLog(self.root), self.run_id),
        )
        fresh = not run.journal.events
        if fresh:
            recorder.record(
                "run-started", runId=self.run_id, goal=self.spec.goal, tasks=len(self._all())
            )
        else:
            recorder.record("run-resumed", runId=self.run_id)
        self.progress(f"{'starting' if fresh else 'resuming'} run {self.run_id}")
        # Threads only for isolated tasks, whose worktrees take a while to make and remove.
        with ThreadPoolExecutor(max_workers=max(8, 2 * self.limit)) as pool:
            starter = Starter(
                self.root,
                self.run_id,
                tasks=self._all(),
                reports=run.reports,
                reported=run.reported,
                spawner=run.spawner,
                pool=pool,
                done=flights.done,
                record=recorder.record,
                remote=run.remote,
            )
            dispatch = self.dispatch_class(
                run, tree, recorder, starter, flights, goal=self.spec.goal, progress=self.progress
            )
            dispatch.add_level(list(self.spec.tasks), 1, None)
            recorder.flush()
            dispatch.loop()
        result = summary(self.run_id, self.dir, self.spec.goal, tree.states(), tree.children)
        recorder.record("run-finished", counts=result.counts, ok=result.ok)
        recorder.flush()
        recorder.checkpoint()
        run.committer.wait(run.journal.written_seq)
        return result
