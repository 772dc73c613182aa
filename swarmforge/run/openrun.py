"""A planned run opened under its lock: its journal resumed, its group commit, spawner and
workers on other hosts started, and all of them closed again in the reverse order.

One process writes a run's journal at a time: whoever holds `orchestrator.lock`. What
the open finds under that lock (every task's status as the journal left it, the tasks
with a report from an earlier life of the run) is read once, here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge.locks import FileLock
from swarmforge.run import overview
from swarmforge.run.journal.committer import Committer
from swarmforge.run.journal.file import Journal
from swarmforge.run.journal.replay import resume_states
from swarmforge.run.remote.connect import remote_for
from swarmforge.run.report.files import reported_tasks
from swarmforge.run.spawner import Spawner
from swarmforge.run.spec.runspec import RunSpec, canonical_json

if TYPE_CHECKING:
    from swarmforge.run.remote.sender import Remote, Workers


@dataclass(frozen=True)
class OpenRun:
    """What an open run holds, valid until `open_run` closes it."""

    root: str
    run_id: str
    dir: str
    reports: str
    resumed: dict[str, str]  # every task's status as the journal left it
    reported: set[str]  # tasks with a report from an earlier life of the run
    journal: Journal
    committer: Committer  # the group commit that makes the journal durable
    spawner: Spawner  # what starts and reaps command tasks
    remote: Remote | None  # the workers on other hosts that command tasks go to


@contextmanager
def open_run(
    root: str,
    spec: RunSpec,
    run_id: str,
    run_dir: str,
    *,
    workers: Workers | None,
    say: Callable[[str], None],
    waiting: Callable[[], bool],
) -> Iterator[OpenRun]:
    """Open run `run_id` of `spec` (kept in `run_dir`) under its lock, for the life of a
    `with` block. While `waiting()` says a claimed task waits for the disk, each fsync of
    the journal wakes the spawner's wait, where the dispatch loop sleeps."""
    directory = Path(run_dir)
    reports = str(directory / "reports")
    with FileLock(str(directory / "orchestrator.lock"), what=f"run {run_id}"):
        overview.keep_spec(run_dir, canonical_json(spec))
        resumed, journal = resume_states(run_dir, sole=True)
        # Tasks with a report from an earlier life of the run (listed under the run's
        # lock): one listing spares every other task a look for a stale one.
        reported = reported_tasks(reports)
        try:
            with (
                Spawner() as spawner,
                Committer(journal, _waker(spawner, waiting)) as committer,
                remote_for(root, run_id, workers, journal.events, say) as remote,
            ):
                yield OpenRun(
                    root=root,
                    run_id=run_id,
                    dir=run_dir,
                    reports=reports,
                    resumed=resumed,
                    reported=reported,
                    journal=journal,
                    committer=committer,
                    spawner=spawner,
                    remote=remote,
                )
        finally:
            journal.close()


def _waker(spawner: Spawner, waiting: Callable[[], bool]) -> Callable[[], None]:
    def durable() -> None:
        """The journal reached the disk a little further (from the committer's thread)."""
        if waiting():
            spawner.wake()  # a held task may start now; else the loop need not wake for this

    return durable
