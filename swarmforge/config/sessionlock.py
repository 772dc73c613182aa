"""The lock `up`, `down` and `gc` hold while they start or stop a project's swarm."""

from __future__ import annotations

from swarmforge import statedir
from swarmforge.layout import SESSION_LOCK
from swarmforge.locks import FileLock


def starting_or_stopping(root: str) -> FileLock:
    """The lock `up`, `down` and `gc` hold for as long as they start or stop the swarm.

    One at a time: two `up`s would each mint a run, and a `down` could stop what an
    `up` is starting. Another one waits a moment, then is refused in one line.
    """
    busy = "Another swarmforge up, down or gc of this project"
    return FileLock(statedir.path(root, SESSION_LOCK), what=busy)
