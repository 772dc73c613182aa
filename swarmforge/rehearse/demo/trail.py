"""The demo's audit trail: every handoff copy in the roles' mailboxes, with its headers,
read while the roles move the files."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge import eventread, events
from swarmforge.config import sessionrecord
from swarmforge.errors import CorruptFile
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox

# One handoff copy of the audit trail: where it lies, its recipient and its headers.
Row = dict[str, str | None]


def _snapshot(path: str) -> tuple[message.Handoff, int] | None:
    """The handoff at `path` and its write time, read through one descriptor; None if it
    is gone (the roles move files while the demo watches) or unreadable."""
    try:
        with Path(path).open("rb") as f:
            data = f.read()
            order = os.fstat(f.fileno()).st_mtime_ns
        return message.parse(data, path), order
    except (OSError, CorruptFile):
        return None


def trail(record: sessionrecord.SessionRecord) -> list[Row]:
    """Every handoff copy in every role's inbox, with its headers and where it lies."""
    found_rows: list[tuple[Row, int]] = []
    for role in record.roles:
        box = Mailbox(role.path)
        for state, directory in (
            ("queued", Box.NEW),
            ("in process", Box.IN_PROCESS),
            ("completed", Box.COMPLETED),
        ):
            for path in box.received(directory):
                found = _snapshot(path)
                if found is None:
                    continue  # moved on between the listing and the read; seen next pass
                h, order = found
                fields = (
                    "from",
                    "to",
                    "priority",
                    "type",
                    "task",
                    "message",
                    "commit",
                    "created_at",
                    "enqueued_at",
                    "dequeued_at",
                    "completed_at",
                    "outcome",
                )
                row: Row = {"file": path, "state": state, "recipient": role.name}
                row.update((k, h.get(k)) for k in fields)
                found_rows.append((row, order))
    # Header times have one-second resolution. Within a second, the order the gate queued
    # them in, from the event log (to the microsecond), breaks the tie: a copy's own write
    # time is no guide, since completing it writes it again. A handoff the gate never
    # queued (the demo's first task, put in the inbox directly) comes first in its second,
    # then the write times order what is left.
    queued = _queued_at(record.project)
    found_rows.sort(
        key=lambda r: (
            str(r[0]["created_at"]),
            queued.get(Path(str(r[0]["file"])).name, ""),
            r[1],
        )
    )
    return [row for row, _ in found_rows]


def _queued_at(root: str) -> dict[str, str]:
    """When the gate queued each handoff, by its file name, as the event log says."""
    chunk = eventread.read(events.log_path(root))
    return {
        str(e.get("name")): str(e.get("ts"))
        for e in chunk.events
        if e.get("kind") == "handoff-queued"
    }
