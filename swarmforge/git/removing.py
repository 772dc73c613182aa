"""Removing a worktree: its uncommitted work rescued or the removal refused, its pending mail
kept, and what an interrupted creation left cleared.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.git import leftovers, nested, repo
from swarmforge.git.command import git, run
from swarmforge.git.lock import git_lock
from swarmforge.git.names import check_component
from swarmforge.git.orphans import drop_state, keep_mailbox, restore_mailbox
from swarmforge.git.project import find_project
from swarmforge.git.rescue import check_rescue_ref, is_dirty, rescue_locked
from swarmforge.git.worktrees import recover_locked, worktree_path


@dataclass(frozen=True)
class Removal:
    """What `remove` did: whether a worktree went, and what of its state was kept where."""

    name: str
    path: str
    removed: bool
    rescued: str | None  # the commit holding its uncommitted work, None if there was none
    mailbox: str | None  # where its pending mailbox items were moved, None if none
    # Repositories that were inside it, each (where it was, where it was moved to).
    kept: tuple[tuple[str, str], ...] = ()


def remove(root: str, name: str, *, rescue_ref: str | None) -> Removal:
    """Remove worktree `name`, first saving its uncommitted work at `rescue_ref`.

    Its pending mailbox items are moved to `.swarmforge/orphaned-mailboxes/`.
    With `rescue_ref=None`, a worktree with uncommitted work is refused. What
    an interrupted creation left there is removed; any other directory refused.
    """
    check_component(name, "worktree name")
    if rescue_ref is not None:
        check_rescue_ref(rescue_ref)
    main = find_project(root)
    path = worktree_path(main.workdir, name)
    with git_lock(main.workdir):
        existed = os.path.lexists(path)
        if name in recover_locked(main):
            return Removal(name, path, existed, None, None)
        if not existed:
            # Its state lies out of its reach (statedir.py): the mail in it is kept.
            mailbox = keep_mailbox(main.workdir, name, path)
            drop_state(path)
            return Removal(name, path, leftovers.forget_locked(main, path), None, mailbox)
        if repo.open_checkout(path) is None:
            leftovers.refuse_unless_leftover(main, "remove", name, path, ())
            leftovers.discard_locked(main, path)
            mailbox = keep_mailbox(main.workdir, name, path)
            drop_state(path)
            return Removal(name, path, True, None, mailbox)
        return _remove_checkout_locked(main, name, path, rescue_ref)


def _remove_checkout_locked(
    main: repo.MainRepo, name: str, path: str, rescue_ref: str | None
) -> Removal:
    mailbox = keep_mailbox(main.workdir, name, path)
    # Their commits are in no repository of ours: a rescue would keep only a gitlink.
    kept = tuple(nested.keep_aside(main.workdir, name, path))
    # A plain remove refuses a worktree with changes or untracked files, so for
    # a clean one, the common case, this one git call both checks and removes.
    if run(main.workdir, "worktree", "remove", path).ok:
        drop_state(path)
        return Removal(name, path, True, None, mailbox, kept)
    try:
        rescued = _rescue_or_refuse(main, name, path, rescue_ref)
        git(main.workdir, "worktree", "remove", "--force", path)
    except BaseException:
        if Path(path).is_dir():
            nested.put_back(path, list(kept))
            if mailbox is not None:
                restore_mailbox(mailbox, path)
        raise
    drop_state(path)
    return Removal(name, path, True, rescued, mailbox, kept)


def _rescue_or_refuse(
    main: repo.MainRepo, name: str, path: str, rescue_ref: str | None
) -> str | None:
    checkout = repo.open_checkout(path)
    if checkout is None or checkout.is_main or checkout.common_dir != main.common_dir:
        raise SwarmforgeError(
            f"Not removing {path}: it is not a worktree of {main.workdir}.",
            hint=f"Move it elsewhere if it is needed; else: rm -rf {shlex.quote(path)}",
        )
    if rescue_ref is None:
        if is_dirty(path):
            raise SwarmforgeError(
                f"Not removing worktree {name!r}: it has uncommitted work and no rescue ref."
            )
        return None
    message = f"swarmforge: uncommitted work of worktree {name}"
    return rescue_locked(main.workdir, checkout, rescue_ref, message)
