"""Where the project is, seen from any directory inside it; outside any project, nowhere."""

from __future__ import annotations

import os

from swarmforge.config.conf import CONFIG_FILE
from swarmforge.errors import SwarmforgeError
from swarmforge.roletable import find_root, worktree_top


def locate_project(cwd: str) -> str | None:
    """The project seen from `cwd`: a swarm's, one with a config, or the checkout; None
    outside any project."""
    try:
        return find_root(cwd)
    except SwarmforgeError:
        pass
    here = os.path.abspath(cwd)
    while not os.path.isfile(os.path.join(here, CONFIG_FILE)):
        parent = os.path.dirname(here)
        if parent == here:
            return worktree_top(cwd)
        here = parent
    return here


def find_project(cwd: str) -> str:
    """The project seen from `cwd`, or `cwd` itself outside any project."""
    return locate_project(cwd) or os.path.abspath(cwd)
