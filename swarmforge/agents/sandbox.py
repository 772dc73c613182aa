"""What an agent's own sandbox lets a role write, whichever agent's box it is.

A role's shell commands run in its agent's OS sandbox (codex's and claude's are both
bubblewrap on Linux). The box keeps the role's worktree writable; swarmforge adds
exactly the git directories a commit, merge or rebase in that worktree writes (its own
git directory, `.git/worktrees/<name>`: index, HEAD and logs; and the common
directory's `objects`, `refs` and `logs`; never `hooks/` nor `config`), the worktree's
own state (its mailbox, which lies in the common git directory: statedir.py) and the
role's own temporary directory. The main checkout's files, other roles' worktrees and
mailboxes, and the user's home stay read-only to it.

In the main checkout a commit writes `.git` itself (its index and HEAD, and the lock
files beside them), and the main checkout's state lies in it. Of it, what would make git
run a program (`hooks/`, `config`), git's records of the other worktrees and the other
worktrees' state stay read-only, as do the other roles' worktrees under `.worktrees/`,
although they lie inside what such a role writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from swarmforge import statedir
from swarmforge.git.command import run as run_git
from swarmforge.layout import WORKTREES_DIR


@dataclass(frozen=True)
class Fit:
    """A role's box, worked out once for its worktree."""

    writable: list[str]  # besides the worktree: its git directories and temporary directory
    read_only: list[str]  # inside what it writes, yet read-only (the main checkout's)
    main_git: str | None  # the main checkout's `.git`, which a commit there writes


def fit(worktree: str, temp_dir: str) -> Fit:
    """The box of a role working in `worktree` with its own `temp_dir` ("" for none)."""
    temp = [temp_dir] if temp_dir else []
    found = run_git(worktree, "rev-parse", "--absolute-git-dir", "--git-common-dir")
    if not found.ok:
        return Fit(temp, [], None)  # no git checkout: nothing of git's to write
    git_dir, common_dir = found.stdout.decode().splitlines()[:2]
    # normpath: ".." taken off lexically, as git itself reads the path
    git_dir, common = os.path.normpath(git_dir), os.path.normpath(Path(worktree, common_dir))
    roots = [str(Path(common, name)) for name in ("objects", "refs", "logs")]
    state = statedir.of(worktree)
    if git_dir != common:
        own = [state] if not Path(state).is_relative_to(worktree) else []
        return Fit([git_dir, *roots, *own, *temp], [], None)
    protected = [str(Path(common, name)) for name in ("hooks", "config", "worktrees")]
    others = str(Path(state, statedir.CHECKOUTS))  # the other worktrees' state
    return Fit([*roots, *temp], [*protected, others, str(Path(worktree, WORKTREES_DIR))], common)
