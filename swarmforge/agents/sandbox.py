"""What an agent's own sandbox lets a role write, whichever agent's box it is.

A role's shell commands run in its agent's OS sandbox (codex's and claude's are both
bubblewrap on Linux). The box keeps the role's worktree writable; swarmforge adds
exactly the git directories a commit, merge or rebase in that worktree writes (its own
git directory, `.git/worktrees/<name>`: index, HEAD and logs; and the common
directory's `objects`, `refs` and `logs`; never `hooks/` nor `config`), and the role's
own temporary directory. The main checkout's files, other roles' worktrees and the
user's home stay read-only to it.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.git.command import run as run_git
from swarmforge.layout import WORKTREES_DIR


def git_dirs(worktree: str) -> tuple[str, str] | None:
    """The git directory of `worktree` and its common directory, both absolute; None if it
    is no git checkout. The two are one for the main checkout."""
    found = run_git(worktree, "rev-parse", "--absolute-git-dir", "--git-common-dir")
    if not found.ok:
        return None
    git_dir, common_dir = found.stdout.decode().splitlines()[:2]
    # normpath: ".." taken off lexically, as git itself reads the path
    return os.path.normpath(git_dir), os.path.normpath(Path(worktree, common_dir))


def git_roots(worktree: str) -> list[str]:
    """The git directories a commit, merge or rebase in `worktree` writes; [] if it is no
    git checkout. A checkout's own `.git` (the main checkout) is not among them: making it
    writable would open its hooks and config too."""
    dirs = git_dirs(worktree)
    if dirs is None:
        return []
    git_dir, common = dirs
    roots = [str(Path(common, name)) for name in ("objects", "refs", "logs")]
    if git_dir != common:
        roots.insert(0, git_dir)
    return roots


def read_only(worktree: str) -> list[str]:
    """What stays read-only to a role working in the main checkout `worktree`, although
    inside what it writes: of `.git`, what would make git run a program (`hooks/`,
    `config`) and git's records of the other worktrees; and the other roles' worktrees.
    [] for a role in a worktree of its own, where none of these is inside what it writes."""
    dirs = git_dirs(worktree)
    if dirs is None or dirs[0] != dirs[1]:
        return []
    common = dirs[1]
    protected = [str(Path(common, name)) for name in ("hooks", "config", "worktrees")]
    return [*protected, str(Path(worktree, WORKTREES_DIR))]


def writable(worktree: str, temp_dir: str) -> list[str]:
    """What a role working in `worktree` may write besides it: its git directories and its
    own temporary directory (if it has one)."""
    return [*git_roots(worktree), *([temp_dir] if temp_dir else [])]
