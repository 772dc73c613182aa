"""The receive helpers' events in the project's log: each item accepted or completed.

Each event names the role from the `recipient` header delivery stamped on the item's copy.
"""

from __future__ import annotations

import os

from swarmforge import events, projectroot
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Mailbox
from swarmforge.handoff.message import Handoff


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
