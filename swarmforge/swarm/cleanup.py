"""`gc`: clean up what a run left behind when its runner was killed with SIGKILL."""

from __future__ import annotations

import os

from swarmforge.git import repo, worktrees
from swarmforge.handoff import handoffd
from swarmforge.handoff.daemon import Paths
from swarmforge.locks import is_held
from swarmforge.swarm import launcher, runner, runrecord


def _stale_pid_files(root: str) -> list[str]:
    """Pid files whose process no longer holds its lock.

    Lock files themselves stay: an unheld flock file is no lock at all, and
    removing one would let two processes lock two different files.
    """
    daemon = Paths(root)
    removed = []
    for pid_file, lock in (
        (os.path.join(root, runner.PID), os.path.join(root, runner.LOCK)),
        (daemon.pid, daemon.lock),
    ):
        if os.path.exists(pid_file) and not is_held(lock):
            os.unlink(pid_file)
            removed.append(pid_file)
    return removed


def gc(root: str) -> dict[str, object]:
    """End a dead run's leftovers: tagged processes, daemon, stale pid and lock files,
    registrations of worktrees whose directory vanished, worktree creations that were
    interrupted, and directories they left. A live run's processes are left alone."""
    root = os.path.realpath(root)
    record = runrecord.load(root)
    live = record is not None and record.state == "running" and launcher.is_running(root, record)
    report: dict[str, object] = {"run_id": record.run_id if record else None, "live": live}
    if not live:
        report["processes"] = launcher.stop_processes(root, record)
        report["daemon"] = handoffd.stop(root)
        if record is not None and record.state == "running":
            record.state = "stopped"
            record.runner_pid = record.inhibitor_pid = None
            for role in record.roles:
                role.pid = None
            runrecord.save(root, record)
        report["pid_files"] = _stale_pid_files(root)
    report["worktrees"], report["rolled_back"], report["cleared"] = [], [], []
    checkout = repo.open_checkout(root)
    if checkout is not None and checkout.is_main:
        # A project that is no git repository yet has no worktree registrations to prune.
        pruned = worktrees.prune(root)
        report["worktrees"] = [w.name for w in pruned.worktrees]
        report["rolled_back"] = list(pruned.rolled_back)
        report["cleared"] = list(pruned.cleared)
    return report
