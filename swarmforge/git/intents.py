"""Intent records: what a worktree creation is about to make, so a crash can be undone.

A creation writes `<root>/.swarmforge/worktrees/<name>.intent` under the git
lock before it touches git and removes it when it is done. Since the lock is
held from before the record is written until after it is removed, any record
seen by a holder of the lock was left by a creation that died half-way, and
is rolled back: the worktree, git's admin dir and the branch that creation
made are removed; a branch that existed before it is never touched.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from swarmforge import statedir
from swarmforge.errors import CorruptFile
from swarmforge.filewrite import atomic_write
from swarmforge.git import repo
from swarmforge.git.command import run
from swarmforge.git.names import component_problem
from swarmforge.layout import INTENTS_DIR, WORKTREES_DIR

SUFFIX = ".intent"


@dataclass(frozen=True)
class Intent:
    """A worktree creation in progress."""

    name: str
    path: str
    branch: str
    created_branch_at: str | None  # the commit of a branch this creation made, else None


def intent_path(root: str, name: str) -> str:
    """Where the intent record of worktree `name` lives."""
    return str(Path(statedir.path(root, INTENTS_DIR), f"{name}{SUFFIX}"))


def record(root: str, intent: Intent) -> None:
    """Write the intent record of `intent`; the caller holds the git lock."""
    path = intent_path(root, intent.name)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    # Not fsynced: the record guards against the process dying, which loses no
    # page cache; after a power loss git's own unsynced checkout is in doubt anyway.
    atomic_write(path, json.dumps(asdict(intent)).encode(), durable=False)


def clear(root: str, name: str) -> None:
    """Remove the intent record of worktree `name`."""
    Path(intent_path(root, name)).unlink(missing_ok=True)


def _load(path: str, root: str) -> Intent:
    try:
        data = json.loads(Path(path).read_bytes())
        fields = {k: data[k] for k in ("name", "path", "branch", "created_branch_at")}
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFile(path, None, f"not an intent record ({exc})") from None
    if not all(isinstance(fields[k], str) for k in ("name", "path", "branch")) or not isinstance(
        fields["created_branch_at"], str | None
    ):
        raise CorruptFile(path, None, "an intent record field has the wrong type")
    name = fields["name"]
    if Path(path).name != f"{name}{SUFFIX}" or component_problem(name) is not None:
        raise CorruptFile(path, None, f"names worktree {name!r}, not its own")
    # Parse on read: a hand-edited path must never steer the rollback's rmtree elsewhere.
    if fields["path"] != str(Path(root, WORKTREES_DIR, name)):
        raise CorruptFile(path, None, f"path {fields['path']!r} is not worktree {name!r} of {root}")
    return Intent(**fields)


def leftovers(root: str) -> list[Intent]:
    """The intent records left by creations that died; the caller holds the git lock."""
    directory = Path(statedir.path(root, INTENTS_DIR))
    try:
        names = sorted(entry.name for entry in directory.iterdir())
    except FileNotFoundError:
        return []
    return [_load(str(directory / n), root) for n in names if n.endswith(SUFFIX)]


def roll_back(root: str, common_dir: str, intent: Intent) -> None:
    """Undo whatever the creation described by `intent` made; the caller holds the git lock."""
    path = intent.path
    if os.path.lexists(Path(path, ".git")):
        # --force twice: a worktree still marked "initializing" by git is locked.
        run(root, "worktree", "remove", "--force", "--force", path)
    if os.path.lexists(path):
        # create() refuses paths that exist, so this directory is the creation's own.
        shutil.rmtree(path, ignore_errors=True)
    for admin in repo.admin_dirs_for(common_dir, path):
        # What git's own cleanup of a failed `worktree add` removes; `git worktree
        # prune` would leave it, because git marks it locked until the checkout ends.
        shutil.rmtree(admin, ignore_errors=True)
    if intent.created_branch_at is not None:
        # Compare-and-delete: a branch that has moved since holds someone's work; keep it.
        run(root, "update-ref", "-d", f"refs/heads/{intent.branch}", intent.created_branch_at)
    clear(root, intent.name)


def recover_locked(root: str, common_dir: str) -> list[str]:
    """Roll back every leftover intent; the names of their worktrees. Caller holds the lock."""
    undone = []
    for intent in leftovers(root):
        roll_back(root, common_dir, intent)
        undone.append(intent.name)
    return undone
