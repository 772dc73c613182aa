"""Tasks done by a swarm role: delivered as a handoff, done when the role completes it."""

from __future__ import annotations

import contextlib
from pathlib import Path

from swarmforge import roletable, times
from swarmforge.daemon import wake as notify
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import copies, message
from swarmforge.handoff.firstline import summary
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.layout import ROLES_TSV
from swarmforge.run.levels import Task

SENDER = "swarmforge"


def role_text(goal: str, task: Task) -> str:
    """What a role is asked to do for `task` of a run whose goal is `goal`."""
    prompt = task.metadata.get("prompt")
    return str(prompt) if prompt else f"{goal} ({task.id})"


def role_entry(root: str, role: str, task_id: str) -> roletable.RoleEntry:
    """The roles.tsv entry of `role`; an error naming the task when the swarm has no such role."""
    try:
        roles = roletable.read_roles(root)
    except SwarmforgeError:
        roles = {}
    if role not in roles:
        raise SwarmforgeError(
            f"Task '{task_id}' is for role '{role}', which is not in {Path(root) / ROLES_TSV}.",
            hint="Start the swarm with `swarmforge up` first.",
        )
    return roles[role]


def handoff_name(role: str, seq: int) -> str:
    """The file name of the handoff for a task, unique by the journal's sequence number."""
    return f"50_{times.compact()}_{seq:06d}_from_{SENDER}_to_{role}.handoff"


def deliver(
    entry: roletable.RoleEntry,
    name: str,
    run_id: str,
    task_id: str,
    text: str,
    root: str | None = None,
) -> str:
    """Publish the task's handoff in the role's inbox/new, the way the daemon delivers (never
    over an existing file), and wake the role's tmux session if it has one."""
    # A spec's text may hold any character; a header line must not (ESC, NUL, ...).
    one_line = summary(text) or task_id
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
            ("created_at", times.stamp()),
        ],
        f"Re-read your role and constitution.\n\nRun {run_id}, task {task_id}:\n{text}\n",
    )
    copies.copy_to(handoff, name, entry.name, entry)
    if root is not None:
        # A wake-up is a courtesy: headless roles watch their inbox themselves. It is held
        # (in a thread of this process) until the agent is at its idle prompt.
        with contextlib.suppress(SwarmforgeError, notify.WakeFailed, OSError):
            notify.make("tmux", root).wake(entry.name, entry, root)
    return Mailbox(entry.path).path(Box.NEW, name)


def where(entry: roletable.RoleEntry, name: str) -> tuple[str, str] | None:
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
