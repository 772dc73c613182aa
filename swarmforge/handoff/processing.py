"""A received handoff's way through processing: accepted from the queue, resumed after a
crash, annotated, completed; each step stamps a header on a new file renamed over the old.
"""

from __future__ import annotations

from swarmforge import filewrite, times
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import move


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
