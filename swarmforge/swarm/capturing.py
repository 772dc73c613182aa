"""Captures of every role's work before a command that stops or moves it: `down`, `gc`
and `repair` (the captures themselves are swarmforge/git/captures.py's)."""

from __future__ import annotations

from pathlib import Path

from swarmforge import roletable
from swarmforge.errors import SwarmforgeError
from swarmforge.git import captures


def capture_roles(root: str, trigger: str) -> list[str]:
    """Capture the worktree of every role in the project's role table, for `trigger`.

    A capture that fails never stops the command that asked for it: the problems are
    returned, one line each, for it to show.
    """
    try:
        roles = roletable.read_roles(root)
    except SwarmforgeError:
        return []  # no swarm was started here: no role has a worktree to capture
    problems = []
    for name, entry in roles.items():
        if not Path(entry.path).is_dir():
            continue
        try:
            captures.take_logged(root, name, entry.path, trigger)
        except (SwarmforgeError, OSError) as exc:
            problems.append(f"capture of {name} failed: {exc}")
    return problems
