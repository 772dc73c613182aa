"""Isolation of one task: its own worktree, branch and port for the length of a block.

The worktree of task `T` in run `R` is named `R-T` (so runs never share one)
and is on branch `swarm/R/T`. Ids may contain '-', so two different pairs can
spell the same name; `create` then finds that name on the other pair's branch
and refuses, rather than letting two tasks share a checkout.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.git import repo
from swarmforge.git.names import branch_name, rescue_ref
from swarmforge.git.removing import Removal, remove
from swarmforge.git.worktrees import create
from swarmforge.ports import port_for, project_identity


class IsolationUnavailable(SwarmforgeError):
    """Isolation was asked for where no worktree can be made; nothing was run."""


@dataclass
class Isolation:
    """Where an isolated task runs; `removal` is filled in once its worktree is gone."""

    path: str
    branch: str
    port: int
    removal: Removal | None = None


def worktree_name(run_id: str, task_id: str) -> str:
    """The worktree name of task `task_id` in run `run_id`: `<runId>-<taskId>`."""
    return f"{run_id}-{task_id}"


def require_worktrees(root: str, run_id: str, task_id: str) -> repo.Checkout:
    """The main checkout at `root`; IsolationUnavailable if no worktree can be made there."""
    found = repo.open_checkout(os.path.realpath(root)) if Path(root).is_dir() else None
    if found is None or not found.is_main or found.head is None:
        raise IsolationUnavailable(
            f"Cannot isolate task {task_id!r} of run {run_id!r}: {root} is not the main "
            "checkout of a git repository with at least one commit.",
            hint="Make it a git repository with a first commit, or run without isolation.",
        )
    return found


@contextmanager
def isolated(
    root: str, run_id: str, task_id: str, *, base: str = "HEAD", port: int | None = None
) -> Iterator[Isolation]:
    """Run the block in a fresh worktree of task `task_id`, removed however the block exits.

    Uncommitted work is saved to `refs/swarmforge/rescue/<runId>/<taskId>` first.
    `port` defaults to the branch's home port; a run passes the one `assign_ports` gave.
    """
    branch = branch_name(run_id, task_id)
    main = require_worktrees(root, run_id, task_id)
    name = worktree_name(run_id, task_id)
    tree = create(main.workdir, name, branch, base)
    home = port_for(branch, project_identity(main.workdir)) if port is None else port
    isolation = Isolation(tree.path, branch, home)
    try:
        yield isolation
    finally:
        isolation.removal = remove(main.workdir, name, rescue_ref=rescue_ref(run_id, task_id))
