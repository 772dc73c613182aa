"""Sweeping: removing the temporary files that killed writers left in the project's mailboxes."""

from __future__ import annotations

from pathlib import Path

from swarmforge import filewrite, roletable
from swarmforge.daemon.paths import Paths
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.proc import liveness

# Where helpers and the daemon write temporary files (the handoffs root itself too).
SWEPT = (Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED, Box.NEW, Box.IN_PROCESS, Box.COMPLETED)


def _sweep_dir(directory: str) -> int:
    """Remove the temporary files of dead processes in `directory`; how many."""
    try:
        paths = list(Path(directory).iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return 0
    removed = 0
    for path in paths:
        owner = filewrite.temp_owner(path.name)
        if owner is None or liveness.is_alive(owner):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                continue
            path.unlink()
        except FileNotFoundError:
            continue
        removed += 1
    return removed


def sweep(root: str, roles: dict[str, roletable.RoleEntry]) -> int:
    """Remove the temporary files that killed writers left in the project at `root`; how many.

    Every mailbox (each role's and the main checkout's: the mailbox root, each box and
    each batch directory) and the daemon's directory are looked in. A temporary name
    carries its writer's pid (filewrite.temp_name): only files of processes that are gone
    are removed, never one a live process may still write.
    """
    directories = {Paths(root).dir}
    for worktree in {root, *(e.path for e in roles.values())}:
        box = Mailbox(worktree)
        if box.problem() is not None:
            continue  # a mailbox root that is a link: nothing is removed through it
        directories.add(box.root)  # the sequence counter's temporary files
        safe = [b for b in SWEPT if box.problem(b) is None]
        directories.update(box.path(b) for b in safe)
        for b in (Box.IN_PROCESS, Box.COMPLETED):
            if b in safe:
                directories.update(box.batches(b))
    return sum(_sweep_dir(d) for d in sorted(directories))
