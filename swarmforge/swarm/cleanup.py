"""`gc`: clean up what a run left behind when its runner was killed with SIGKILL."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from swarmforge import roletable, statedir
from swarmforge.config import sessionlock, sessionrecord
from swarmforge.daemon import stopping
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.sweep import sweep as mailbox_sweep
from swarmforge.errors import SwarmforgeError
from swarmforge.git import prune, repo
from swarmforge.layout import RUNNER_LOCK, RUNNER_PID
from swarmforge.locks import is_held
from swarmforge.swarm.artifacts.report import Sweep
from swarmforge.swarm.artifacts.sweep import sweep
from swarmforge.swarm.capturing import capture_roles
from swarmforge.swarm.teardown import is_running, record_stopped, stop_processes


def _stale_pid_files(root: str) -> list[str]:
    """Pid files whose process no longer holds its lock.

    Lock files themselves stay: an unheld flock file is no lock at all, and
    removing one would let two processes lock two different files.
    """
    daemon = Paths(root)
    removed = []
    for pid_file, lock in (
        (Path(statedir.path(root, RUNNER_PID)), statedir.path(root, RUNNER_LOCK)),
        (Path(daemon.pid), daemon.lock),
    ):
        if pid_file.exists() and not is_held(lock):
            pid_file.unlink()
            removed.append(str(pid_file))
    return removed


@dataclass(frozen=True)
class GcReport:
    """What gc found and did."""

    run_id: str | None
    live: bool  # the run is alive: its processes were left alone
    processes: list[int] = field(default_factory=list)
    daemon: int | None = None
    pid_files: list[str] = field(default_factory=list)
    worktrees: list[str] = field(default_factory=list)  # stale registrations pruned
    rolled_back: list[str] = field(default_factory=list)  # interrupted creations
    cleared: list[str] = field(default_factory=list)  # half-made worktree directories
    temporary_files: int = 0  # left in mailboxes by killed helpers
    artifacts: Sweep | None = None  # with --artifacts: ignored build output of stopped roles
    captures_failed: list[str] = field(default_factory=list)  # roles whose work was not captured

    def as_json(self) -> dict[str, object]:
        shown = asdict(self)
        del shown["artifacts"]
        if self.artifacts is not None:
            shown["artifacts"] = self.artifacts.as_json()
        return shown


def gc(root: str, artifacts: bool = False, dry_run: bool = False) -> GcReport:
    """End a dead run's leftovers: tagged processes, daemon, stale pid and lock files,
    registrations of worktrees whose directory vanished, worktree creations that were
    interrupted, directories they left, and the temporary files of killed helpers. A live
    run's processes are left alone.

    With `artifacts`, then remove the git-ignored build output of stopped roles'
    worktrees (artifacts/). `dry_run` changes nothing at all: it only lists that output,
    since ending processes cannot be rehearsed. Except for that listing, it holds the
    session lock, as `up` and `down` do.
    """
    root = os.path.realpath(root)
    if dry_run:
        record = sessionrecord.load(root)
        live = record is not None and record.state == "running" and is_running(root, record)
        run_id = record.run_id if record else None
        return GcReport(run_id, live, artifacts=sweep(root, dry_run=True) if artifacts else None)
    with sessionlock.starting_or_stopping(root):
        return gc_held(root, artifacts)


def gc_held(root: str, artifacts: bool = False) -> GcReport:
    """`gc`, by a caller that holds the session lock (`up`, after a killed runner)."""
    record = sessionrecord.load(root)
    live = record is not None and record.state == "running" and is_running(root, record)
    processes: list[int] = []
    daemon: int | None = None
    pid_files: list[str] = []
    if not live:
        processes = stop_processes(root, record)
        daemon = stopping.stop(root)
        if record is not None and record.state == "running":
            record_stopped(root)
        pid_files = _stale_pid_files(root)
    failed = capture_roles(root, "gc")  # told, never stopping gc
    pruned = None
    checkout = repo.open_checkout(root)
    if checkout is not None and checkout.is_main:
        # A project that is no git repository yet has no worktree registrations to prune.
        pruned = prune.prune(root)
    try:
        roles = roletable.read_roles(root)
    except SwarmforgeError:
        roles = {}  # no role table: only the main checkout's mailbox
    return GcReport(
        run_id=record.run_id if record else None,
        live=live,
        processes=processes,
        daemon=daemon,
        pid_files=pid_files,
        worktrees=[w.name for w in pruned.worktrees] if pruned else [],
        rolled_back=list(pruned.rolled_back) if pruned else [],
        cleared=list(pruned.cleared) if pruned else [],
        temporary_files=mailbox_sweep(root, roles),
        artifacts=sweep(root) if artifacts else None,
        captures_failed=failed,
    )
