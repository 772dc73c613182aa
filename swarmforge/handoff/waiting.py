"""What waits in an outbox for delivery: the finished files, and those git tracks there."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.git import command
from swarmforge.handoff.mailbox import SUFFIX, Box
from swarmforge.layout import HANDOFFS


def pending(outbox: str) -> list[str]:
    """Finished handoffs waiting in `outbox` (never `outbox/tmp/`), in name order."""
    try:
        entries = list(os.scandir(outbox))
    except FileNotFoundError:
        return []
    # Anything named *.handoff that is not a directory is an item: a symlink, a FIFO
    # or an unreadable file must go to failed/, not lie in the outbox forever.
    return sorted(
        e.path
        for e in entries
        if e.name.endswith(SUFFIX)
        and not e.name.startswith(".")
        and not e.is_dir(follow_symlinks=True)
    )


def tracked(worktree: str) -> set[str]:
    """Names of the files in the outbox of `worktree` that git tracks there.

    Such a file came with a commit, not from the gate, so it is never delivered. A
    directory git does not know (ls-files fails) tracks nothing.
    """
    outbox = Path(HANDOFFS, Box.OUTBOX)
    result = command.run(worktree, "ls-files", "-z", "--", str(outbox))
    if not result.ok:
        return set()
    paths = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    files = [Path(p) for p in paths if p]
    return {f.name for f in files if f.parent == outbox}
