"""`ready`: accept the next task, or every queued item of the top priority as a batch.

Every refusal, message and exit code follows docs/protocol.md ("Receiving work"). The
helpers never guess: a state they cannot read one way is refused, not repaired. The
one state they repair is their own: an empty batch directory that a `ready` killed
between making it and filling it left behind (inprocess.py).
"""

from __future__ import annotations

import os

from swarmforge.errors import Refused, SwarmforgeError
from swarmforge.handoff.inprocess import (
    accept,
    batch_items,
    drop_stale_empty_batches,
    emit,
    event_fields,
    new_batch_dir,
    resume,
)
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.message import Handoff
from swarmforge.handoff.printout import Batch, Task, listing
from swarmforge.handoff.unreadable import SetAside, readable

CLAIM_ATTEMPTS = 5  # another claimer of the same mailbox can win a race; look again


def _resume(path: str) -> Task:
    return Task(path, resume(path))


def ready_task(box: Mailbox, aside: list[SetAside] | None = None) -> Task | None:
    """Accept the next task (or resume the current one); None when the queue is empty.

    A queued file that is no handoff is set aside (listed in `aside`) and the next taken.
    """
    aside = [] if aside is None else aside
    box.ensure(Box.NEW, Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    for _ in range(CLAIM_ATTEMPTS):
        batches = box.batches()
        if batches:
            raise Refused(
                "TASK_IN_PROCESS_IS_BATCH: use ready_for_next.sh or done_with_current.sh.",
                details=listing(batches),
            )
        current = box.items(Box.IN_PROCESS)
        if len(current) > 1:
            raise Refused(
                "AMBIGUOUS_TASK_STATE: multiple tasks are already in process.",
                details=listing(current),
            )
        if current:
            return _resume(current[0])
        queued = box.items(Box.NEW)
        first: list[tuple[str, Handoff]] = []
        while queued and not first:
            first = readable(box, [queued.pop(0)], aside)
        if not first:
            return None
        task = _claim(*first[0], box.path(Box.IN_PROCESS))
        if task is not None:
            emit(box, "handoff-dequeued", [event_fields(task.path, task.handoff)])
            return task
    raise SwarmforgeError("Could not take a task: other processes keep taking them first.")


def _claim(src: str, handoff: Handoff, directory: str) -> Task | None:
    """Move queued `src` (parsed as `handoff`) into `directory` and stamp dequeued_at;
    None if another took it."""
    dst = os.path.join(directory, os.path.basename(src))
    if os.path.lexists(dst):
        raise Refused(f"AMBIGUOUS_TASK_STATE: target in-process file already exists: {dst}")
    try:
        return Task(dst, accept(src, dst, handoff))
    except FileNotFoundError:
        return None


def ready_batch(box: Mailbox, aside: list[SetAside] | None = None) -> Batch | None:
    """Accept every queued item of the top priority as one batch (or resume the current one).

    Queued files that are no handoffs are set aside (listed in `aside`).
    """
    aside = [] if aside is None else aside
    box.ensure(Box.NEW, Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    for _ in range(CLAIM_ATTEMPTS):
        singles = box.items(Box.IN_PROCESS)
        if singles:
            raise Refused(
                "TASK_IN_PROCESS_IS_SINGLE: use ready_for_next.sh or done_with_current.sh.",
                details=listing(singles),
            )
        batches = box.batches()
        if len(batches) > 1:
            raise Refused(
                "AMBIGUOUS_TASK_STATE: multiple batches are already in process.",
                details=listing(batches),
            )
        if batches:
            return Batch(batches[0], [_resume(p) for p in batch_items(batches[0])])
        queued = readable(box, box.items(Box.NEW), aside)
        if not queued:
            return None
        top = queued[0][1].get("priority") or "50"
        chosen = [(p, h) for p, h in queued if (h.get("priority") or "50") == top]
        directory = new_batch_dir(box)
        taken = [t for t in (_claim(p, h, directory) for p, h in chosen) if t is not None]
        if taken:
            batch = os.path.basename(directory)
            emit(
                box,
                "handoff-dequeued",
                [event_fields(t.path, t.handoff, batch=batch) for t in taken],
            )
            return Batch(directory, taken)
        os.rmdir(directory)  # every item went to a faster claimer
    raise SwarmforgeError("Could not take a batch: other processes keep taking items first.")
