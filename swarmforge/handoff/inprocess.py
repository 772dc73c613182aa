"""What `ready` and `done` do in `in_process/`: a handoff accepted from the queue, resumed
after a crash, annotated and completed, each step stamping a header on a new file renamed
over the old; the batch directories, and the empty ones a killed `ready` left behind;
and the events each step logs in the project's log.

Each event names the role from the `recipient` header delivery stamped on the item's
copy. On the helpers' path: standard library only.
"""

from __future__ import annotations

import os
import time

from swarmforge import events, filewrite, fsutil, projectroot, times
from swarmforge.errors import CorruptFile, Refused, SwarmforgeError
from swarmforge.handoff import mailbox as mb
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, move
from swarmforge.handoff.message import Handoff


def accept(src: str, dst: str, handoff: message.Handoff) -> message.Handoff:
    """Take queued `src`, already parsed as `handoff`, by renaming it to `dst`, then stamp
    `dequeued_at`.

    Parsed first, so a corrupt file stays where it is (a queued file is never edited
    in place, so what was parsed is what is taken). Raises FileNotFoundError if
    another process took it first: claiming is the rename.
    """
    filewrite.move_noreplace(src, dst)
    return _restamp(dst, handoff, "dequeued_at")


def resume(path: str) -> message.Handoff:
    """The handoff in process at `path`, stamped `dequeued_at` if a crash left it unstamped."""
    handoff = message.read(path)
    if handoff.get("dequeued_at") is not None:
        return handoff
    return _restamp(path, handoff, "dequeued_at")


def complete(src: str, dst: str) -> None:
    """Stamp `completed_at` on the task at `src` and move it to `dst`."""
    _restamp(src, message.read(src), "completed_at")
    move(src, dst)


def complete_batch(src: str, dst: str, items: list[str]) -> None:
    """Stamp `completed_at` on every item of batch directory `src`, then move it to `dst`."""
    now = times.stamp()
    for item in items:
        _restamp(item, message.read(item), "completed_at", now)
    move(src, dst)


def annotate(path: str, headers: list[tuple[str, str]]) -> message.Handoff:
    """Add or replace headers of the handoff in process at `path` (e.g. a failed outcome)."""
    handoff = message.read(path)
    for field, value in headers:
        handoff = handoff.with_header(field, value)
    filewrite.atomic_write(path, handoff.render())
    return handoff


def _restamp(
    path: str, handoff: message.Handoff, field: str, value: str | None = None
) -> message.Handoff:
    # Published files are never edited in place: a new file is renamed over the old.
    updated = handoff.with_header(field, value or times.stamp())
    filewrite.atomic_write(path, updated.render())
    return updated


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


def project_root(box: Mailbox) -> str | None:
    """The project whose log gets the events of `box`, or None if it cannot be found."""
    try:
        return projectroot.find_root(box.worktree)
    except (SwarmforgeError, OSError):
        return None


def event_fields(path: str, handoff: Handoff | None, **more: str) -> dict[str, object]:
    """An event's fields for the item at `path`: name, role, sender, priority, and `more`."""
    fields: dict[str, object] = {"name": os.path.basename(path)}
    if handoff is not None:
        for key, header in (("role", "recipient"), ("from", "from"), ("priority", "priority")):
            value = handoff.get(header)
            if value:
                fields[key] = value
    fields.update((k, v) for k, v in more.items() if v)
    return fields


def emit(box: Mailbox, kind: str, items: list[dict[str, object]]) -> None:
    """Append one event of `kind` per item, with one write."""
    root = project_root(box) if items else None
    if root is not None:
        events.EventLog(root).emit_many((kind, item) for item in items)


def completed(box: Mailbox, paths: list[str], batch: str = "") -> None:
    """The `handoff-completed` events of the items just completed to `paths`."""
    items = []
    for path in paths:
        try:
            handoff: Handoff | None = message.read(path)
        except (OSError, CorruptFile):
            handoff = None
        outcome = (handoff.get("outcome") or "") if handoff else ""
        code = (handoff.get("exit_code") or "") if handoff else ""
        items.append(event_fields(path, handoff, batch=batch, outcome=outcome, exit_code=code))
    emit(box, "handoff-completed", items)
