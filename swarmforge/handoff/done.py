"""`done`: complete the task or the batch in process, moving it to `inbox/completed/`.

Like `ready`, it refuses a state it cannot read one way (docs/protocol.md, "Receiving
work"); each completed item is an event in the project's log.
"""

from __future__ import annotations

import os

from swarmforge.errors import Refused, SwarmforgeError
from swarmforge.handoff.inprocess import (
    batch_items,
    complete,
    complete_batch,
    completed,
    drop_stale_empty_batches,
)
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.printout import listing


def done_task(box: Mailbox) -> list[str]:
    """Complete the task in process; the path it was completed to."""
    box.ensure(Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    batches = box.batches()
    if batches:
        raise Refused("CURRENT_WORK_IS_BATCH: use done_with_current.sh.", details=listing(batches))
    current = box.items(Box.IN_PROCESS)
    if not current:
        raise SwarmforgeError("NO_CURRENT_TASK")
    if len(current) > 1:
        raise Refused(
            "AMBIGUOUS_TASK_STATE: multiple tasks are in process.", details=listing(current)
        )
    src = current[0]
    dst = box.path(Box.COMPLETED, os.path.basename(src))
    if os.path.lexists(dst):
        raise Refused(f"AMBIGUOUS_TASK_STATE: completed file already exists: {dst}")
    complete(src, dst)
    completed(box, [dst])
    return [dst]


def done_batch(box: Mailbox) -> tuple[list[str], str]:
    """Complete the batch in process; its items' new paths and the batch's new directory."""
    box.ensure(Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    singles = box.items(Box.IN_PROCESS)
    if singles:
        raise Refused(
            "CURRENT_WORK_IS_SINGLE_TASK: use done_with_current.sh.", details=listing(singles)
        )
    batches = box.batches()
    if not batches:
        raise SwarmforgeError("NO_CURRENT_BATCH")
    if len(batches) > 1:
        raise Refused(
            "AMBIGUOUS_TASK_STATE: multiple batches are in process.", details=listing(batches)
        )
    src = batches[0]
    items = batch_items(src)
    dst = box.path(Box.COMPLETED, os.path.basename(src))
    if os.path.lexists(dst):
        raise Refused(f"AMBIGUOUS_TASK_STATE: completed batch already exists: {dst}")
    complete_batch(src, dst, items)
    done = [os.path.join(dst, os.path.basename(p)) for p in items]
    completed(box, done, os.path.basename(dst))
    return done, dst
