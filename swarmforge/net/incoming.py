"""Handoffs from other hosts: each message taken becomes the recipient's copy here.

Each message becomes the recipient's copy in its `inbox/new/`, exactly as local
delivery writes it (copies.copy_to: the `recipient` and `enqueued_at` headers, a
hidden temporary name linked to the final one, flushed to disk), and is acknowledged
only after that. A message delivered again (its acknowledgement was lost, or the
receiver died before it) finds its copy already there, in new/, in_process/ or
completed/, and is acknowledged without a second copy.

A `git_handoff`'s commit comes through the hub (hub.py): the receiver fetches it before
it writes the copy, whose merge check is then made against the recipient's branch here,
as local delivery makes it. A hub that cannot be reached holds the message (it comes
again) rather than deliver a commit the recipient could not merge.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from swarmforge import filewrite
from swarmforge.errors import CorruptFile
from swarmforge.handoff import commitcheck, copies, message
from swarmforge.handoff.mailbox import SUFFIX, Box, Mailbox, UnsafeMailbox
from swarmforge.handoff.names import name_problem
from swarmforge.handoff.outbox import set_aside
from swarmforge.net import hub as hubs
from swarmforge.net.consumer import Consumer, Message
from swarmforge.net.outgoing import COMMIT_HEADER, NAME_HEADER
from swarmforge.roletable import RoleEntry

# What became of a received message.
DELIVERED, DUPLICATE, FAILED, HELD = "delivered", "duplicate", "failed", "held"


@dataclass(frozen=True)
class Received:
    """One message taken: its file name, what became of it, and why when it failed."""

    name: str
    status: str
    reason: str = ""
    # For the receiving daemon's events: the handoff's sender and priority, and the
    # `merge-conflict` fields and skipped checks of its copy.
    sender: str = field(default="", compare=False)
    priority: str = field(default="", compare=False)
    conflicts: list[dict[str, object]] = field(default_factory=list, compare=False)
    unchecked: list[str] = field(default_factory=list, compare=False)


def receive(
    consumer: Consumer,
    worktree: str,
    batch: int = 10,
    timeout: float = 1.0,
    hub: str | None = None,
) -> list[Received]:
    """Take the waiting mail of `consumer`'s role into the mailbox of `worktree`.

    A message is acknowledged once its copy is durable (or it was set aside in failed/);
    a message whose mailbox is unsafe is left unacknowledged, to come again later.
    """
    results = []
    for msg in consumer.fetch(batch, timeout):
        result = store(consumer.role, worktree, msg, hub)
        if result.status != HELD:
            msg.ack()
        results.append(result)
    return results


def store(role: str, worktree: str, msg: Message, hub: str | None = None) -> Received:
    """Write `msg` as `role`'s copy in inbox/new/ of `worktree`, unless it is there already.

    With `hub`, a git_handoff's commit is fetched from it first, and the copy carries
    its merge check against `role`'s branch.
    """
    box = Mailbox(worktree)
    name = msg.headers.get(NAME_HEADER, "")
    problem = name_problem(name)
    if problem:
        return _set_aside(box, _stand_in(msg), msg.data, f"no handoff file name ({problem})")
    try:
        # Merge-check headers come only from the receiving side: drop any that came along.
        handoff = commitcheck.unchecked(message.parse(msg.data, name))
    except CorruptFile as exc:
        return _set_aside(box, name, msg.data, f"malformed: {exc}")
    found = box.locate(name)
    if found is not None:
        if copies.is_same_handoff(found[1], handoff.get("id")):
            return Received(name, DUPLICATE)
        reason = f"a different handoff named {name} is already in {found[1]}"
        return _set_aside(box, name, msg.data, reason)
    entry = RoleEntry([role, "", box.worktree, "", "", ""])
    checks = commitcheck.MergeChecks(handoff, name, box.worktree)
    if checks.commit and hub:
        try:
            hubs.fetch(box.worktree, hub, msg.headers.get(COMMIT_HEADER) or checks.commit)
        except hubs.HubError as exc:
            return Received(name, HELD, exc.message)
    check = checks.against(role, entry)
    try:
        made = copies.copy_to(handoff, name, role, entry, check.headers() if check else None)
    except UnsafeMailbox as exc:
        return Received(name, HELD, exc.message)
    if not made:
        return Received(name, DUPLICATE)
    checks.delivered(role, check)
    return Received(
        name,
        DELIVERED,
        sender=handoff.get("from") or "",
        priority=handoff.get("priority") or "",
        conflicts=checks.conflicts,
        unchecked=checks.problems,
    )


def _stand_in(msg: Message) -> str:
    """A file name for a message that came without a usable one."""
    digest = hashlib.sha256(msg.msg_id.encode() + b"\0" + msg.data).hexdigest()[:16]
    return f"unnamed_{digest}{SUFFIX}"


def _set_aside(box: Mailbox, name: str, data: bytes, reason: str) -> Received:
    """Keep a message that cannot become a copy in the recipient's failed/, with the reason.

    Staged in outbox/tmp/ under its own name (never delivered from there) so that
    outbox.set_aside moves it with its `.error` beside it, as it does for local files.
    """
    box.ensure(Box.OUTBOX_TMP, Box.FAILED)
    staged = box.path(Box.OUTBOX_TMP, name)
    if os.path.lexists(staged):
        Path(staged).unlink()  # left by a receiver that died before moving it
    filewrite.write_new(staged, data)
    set_aside(box, staged, reason)
    return Received(name, FAILED, reason)
