"""A role's mailbox as `status` shows it: the task or batch in hand, and the items that failed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from swarmforge import times
from swarmforge.errors import CorruptFile
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, items_in


def _age(stamp: str | None, now: float) -> int | None:
    if not stamp:
        return None
    try:
        return int(now - times.parse(stamp))
    except ValueError:
        return None


@dataclass(frozen=True)
class Current:
    """The task or batch a role has in hand."""

    path: str
    count: int | None  # None when its first item cannot be read
    sender: str | None
    age_seconds: int | None

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "count": self.count,
            "from": self.sender,
            "age_seconds": self.age_seconds,
        }


def in_hand(box: Mailbox, now: float) -> Current | None:
    batches = box.batches()
    items = items_in(batches[0]) if batches else box.items(Box.IN_PROCESS)
    if not items:
        return None
    path = batches[0] if batches else items[0]
    try:
        first = message.read(items[0])
    except (OSError, CorruptFile):
        return Current(path, None, None, None)
    return Current(path, len(items), first.get("from"), _age(first.get("dequeued_at"), now))


def count_failed(box: Mailbox) -> int:
    count = 0
    completed = box.path(Box.COMPLETED)
    for path in items_in(completed) + [p for b in _dirs(completed) for p in items_in(b)]:
        try:
            count += message.read(path).get("outcome") == "failed"
        except (OSError, CorruptFile):
            continue
    return count


def _dirs(directory: str) -> list[str]:
    try:
        return [e.path for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def names_in(directory: str) -> list[str]:
    try:
        return [entry.name for entry in Path(directory).iterdir()]
    except FileNotFoundError:
        return []
