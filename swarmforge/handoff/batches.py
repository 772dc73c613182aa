"""Batch directories in process: a new one for each batch, its items, and the empty ones
a killed `ready` left behind, dropped."""

from __future__ import annotations

import os
import time

from swarmforge import fsutil, times
from swarmforge.errors import Refused
from swarmforge.handoff import mailbox as mb
from swarmforge.handoff.mailbox import Box, Mailbox

# An empty batch directory older than this was left by a killed `ready`; a younger one
# may be another `ready` of the same role about to move its items in.
STALE_EMPTY_BATCH = 10.0


def drop_stale_empty_batches(box: Mailbox, now: float | None = None) -> list[str]:
    """Remove in-process batch directories that a killed `ready` left empty; their paths."""
    dropped = []
    for directory in box.batches():
        try:
            if os.listdir(directory):
                continue
            age = (time.time() if now is None else now) - os.lstat(directory).st_mtime
            if age >= STALE_EMPTY_BATCH:
                os.rmdir(directory)  # fails, and keeps it, if an item arrived meanwhile
                dropped.append(directory)
        except OSError:
            continue
    return dropped


def batch_items(directory: str) -> list[str]:
    items = mb.items_in(directory)
    if not items:
        raise Refused(f"AMBIGUOUS_TASK_STATE: batch contains no tasks: {directory}")
    return items


def new_batch_dir(box: Mailbox) -> str:
    stamp = times.compact()
    n = 1
    while True:
        name = f"{mb.BATCH_PREFIX}{stamp}_{n:06d}"
        n += 1
        if os.path.lexists(box.path(Box.COMPLETED, name)):
            continue  # a batch completed within the same second: never reuse its name
        try:
            os.mkdir(box.path(Box.IN_PROCESS, name), fsutil.DIR_MODE)
        except FileExistsError:
            continue
        return box.path(Box.IN_PROCESS, name)
