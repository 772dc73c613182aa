"""Finding the project from any directory inside it: its swarm, its swarmforge.conf or its
git checkout, read from the files alone, without git.
"""

from __future__ import annotations

import os

from swarmforge import statedir
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import CONFIG_FILE, ROLES_TSV
from swarmforge.statedir import common_dir, git_dir_of

# What `locate` may take for the project, each a directory seen from where it looks.
SWARM = "swarm"  # a started swarm's root, which holds roles.tsv
CONFIG = "config"  # the nearest directory at or above with swarmforge/swarmforge.conf
CHECKOUT = "checkout"  # the top of the git worktree
HERE = "here"  # the directory itself
ANYWHERE = (SWARM, CONFIG, CHECKOUT)  # a project of any kind, as `doctor` looks for one
NOT_FOUND = "Cannot find SwarmForge project root"  # no swarm from here (tests match it)


def project_digest(root: str) -> str:
    """A short name of the project at `root`, the same whichever way its path is spelt:
    its private tmux socket's and its agents' temporary directories' (12 hex digits of
    a SHA-256 of its real path)."""
    import hashlib  # only when asked: not on the helpers' start-up path

    return hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:12]


def worktree_top(start: str) -> str | None:
    """The top directory of the git worktree holding `start`, found the way git finds it."""
    here = os.path.abspath(start)
    while True:
        if _is_git(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _is_git(path: str) -> bool:
    """Whether `path` is a `.git` git would stop at: a directory with a HEAD, or a file
    naming one (`gitdir: ...`). An empty `.git` directory, such as a sandbox's mount point
    left in /tmp, is not one, and git walks on past it."""
    if os.path.isdir(path):
        return os.path.isfile(os.path.join(path, "HEAD"))
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"gitdir: "
    except OSError:
        return False


def locate(cwd: str, kinds: tuple[str, ...] = (SWARM,)) -> str | None:
    """The project seen from `cwd`: the first of `kinds` found, in their order (SWARM,
    CONFIG, CHECKOUT, HERE above); None if none is."""
    for kind in kinds:
        if kind == SWARM:
            found = _swarm_root(cwd)
        elif kind == CONFIG:
            found = _config_root(cwd)
        elif kind == CHECKOUT:
            found = worktree_top(cwd)
        else:
            found = os.path.abspath(cwd)
        if found is not None:
            return found
    return None


def find_root(cwd: str) -> str:
    """The root of the swarm seen from `cwd`, as SwarmForge's helpers find it."""
    found = _swarm_root(cwd)
    if found is None:
        raise SwarmforgeError(NOT_FOUND)
    return found


def _swarm_root(cwd: str) -> str | None:
    """`cwd`, its worktree's top or that worktree's main checkout: the first with roles.tsv,
    looked for where each one's state lies (statedir), so a view deleted hides nothing."""
    for found in _candidates(cwd):
        if os.path.isfile(statedir.path(found, ROLES_TSV)):
            return found
    return None


def _candidates(cwd: str) -> list[str]:
    candidates = [cwd]
    top = worktree_top(cwd)
    if top is not None:
        candidates.append(top)
        git_dir = git_dir_of(top)
        if git_dir is not None:
            candidates.append(os.path.dirname(common_dir(git_dir)))
    return candidates


def _config_root(cwd: str) -> str | None:
    here = os.path.abspath(cwd)
    while not os.path.isfile(os.path.join(here, CONFIG_FILE)):
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return here
