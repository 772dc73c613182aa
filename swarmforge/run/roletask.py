"""Tasks done by a swarm role: delivered as a handoff, done when the role completes it."""

from __future__ import annotations

import os

from swarmforge import fsutil, project
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, compact_stamp, utc_stamp

SENDER = "swarmforge"


def role_entry(root: str, role: str, task_id: str) -> project.RoleEntry:
    """The roles.tsv entry of `role`; an error naming the task when the swarm has no such role."""
    try:
        roles = project.read_roles(root)
    except SwarmforgeError:
        roles = {}
    if role not in roles:
        raise SwarmforgeError(
            f"Task '{task_id}' is for role '{role}', which is not in "
            f"{os.path.join(root, project.ROLES_TSV)}.",
            hint="Start the swarm with `swarmforge up` first.",
        )
    return roles[role]


def handoff_name(role: str, seq: int) -> str:
    """The file name of the handoff for a task, unique by the journal's sequence number."""
    return f"50_{compact_stamp()}_{seq:06d}_from_{SENDER}_to_{role}.handoff"


def deliver(entry: project.RoleEntry, name: str, run_id: str, task_id: str, text: str) -> str:
    """Publish the task's handoff in the role's inbox/new (never over an existing file)."""
    stamp = utc_stamp()
    one_line = " ".join(text.split())[:80] or task_id
    handoff = message.Handoff(
        [
            ("id", name.split("_", 1)[1].rsplit("_to_", 1)[0]),
            ("from", SENDER),
            ("to", entry.name),
            ("priority", "50"),
            ("type", "note"),
            ("message", one_line),
            ("task", task_id),
            ("run", run_id),
            ("created_at", stamp),
            ("recipient", entry.name),
            ("enqueued_at", stamp),
        ],
        f"Re-read your role and constitution.\n\nRun {run_id}, task {task_id}:\n{text}\n",
    )
    box = Mailbox(entry.path)
    box.ensure(Box.NEW)
    final = box.path(Box.NEW, name)
    tmp = fsutil.temp_name(final)
    fsutil.write_new(tmp, handoff.render())
    fsutil.publish(tmp, final)
    fsutil.fsync_dir(box.path(Box.NEW))
    return final


def where(entry: project.RoleEntry, name: str) -> tuple[str, str] | None:
    """(state, path) of the task's handoff in the role's mailbox: new, in_process or completed."""
    found = Mailbox(entry.path).locate(name)
    if found is None:
        return None
    box, path = found
    return {Box.COMPLETED: "completed", Box.IN_PROCESS: "in_process"}.get(box, "new"), path


def outcome(path: str) -> bool:
    """True unless the completed handoff says `outcome: failed`."""
    try:
        return message.read(path).get("outcome") != "failed"
    except (OSError, CorruptFile):
        return False
