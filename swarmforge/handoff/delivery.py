"""Delivery of one outbox file to every recipient, the Maildir way.

For each recipient the copy (stamped `recipient` and `enqueued_at`) is written
under a hidden temporary name in the recipient's `inbox/new/`, flushed, and
hard-linked to its final name, which fails rather than replaces if the name
exists. The original is archived in `sent/` only after every copy exists, so a
crash at any instant is completed by a retry that never makes a second copy.

Each copy of a git_handoff also says whether its commit merges cleanly into that
recipient's branch (commitcheck.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from swarmforge import fsutil, text
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import message, outbox
from swarmforge.handoff.commitcheck import MergeChecks, flagged, unchecked
from swarmforge.handoff.copies import copy_to, plan, recipients_of
from swarmforge.handoff.mailbox import UnsafeMailbox
from swarmforge.handoff.names import NAME_FORMAT, name_problem
from swarmforge.handoff.outcome import DELIVERED, FAILED, GONE, HELD, Outcome, Undeliverable
from swarmforge.roletable import RoleEntry

TRACKED = "tracked by git: handoffs come only from the gate"


class Remote(Protocol):
    """The way to roles that other hosts run (swarmforge/daemon/crossing.py)."""

    @property
    def roles(self) -> Mapping[str, str]:
        """Each role another host runs, with that host's name."""

    def send(self, path: str, handoff: message.Handoff, recipients: list[str]) -> None:
        """Hand the handoff at `path` to `recipients`, durably, or raise SwarmforgeError
        (the original then stays in the outbox) or Undeliverable."""


def fail(path: str, reason: str) -> None:
    """Move an undeliverable outbox file to failed/ beside a `<name>.error` saying why."""
    outbox.set_aside(outbox.sender(path), path, reason)


def archive(path: str) -> None:
    """Move a delivered original from outbox/ to the sender's sent/."""
    try:
        outbox.archive(outbox.sender(path), path)
    except FileExistsError:
        # Already archived once under this name: the outbox file is a duplicate.
        raise Undeliverable(f"a handoff named {Path(path).name} was already sent") from None


def deliver(
    path: str,
    roles: dict[str, RoleEntry],
    *,
    is_tracked: bool = False,
    remote: Remote | None = None,
) -> Outcome:
    """Deliver the outbox file at `path`: every missing copy, then archive the original.

    `is_tracked`: git tracks the file (see tracked), which is then failed unread.
    `remote`: the roles other hosts run, and the way to them; their copies are sent
    (after the local ones are made) before the original is archived.
    """
    name = Path(path).name
    if is_tracked and os.path.lexists(path):
        return _failed(path, TRACKED)
    problem = name_problem(name)
    if problem and os.path.lexists(path):
        # A name the gate never makes may hold anything, even line breaks that would
        # forge lines of a printout; its content is not even looked at.
        return _failed(path, f"the file name is not {NAME_FORMAT} ({problem}): {text.shown(name)}")
    try:
        # Only a regular file is opened, never blocking: a FIFO would hang every delivery.
        data = fsutil.read_regular(path)
    except FileNotFoundError:
        return Outcome(name, GONE)  # archived by an earlier pass meanwhile
    except fsutil.NotRegularFile as exc:
        return _failed(path, str(exc.strerror))
    except OSError as exc:
        return _failed(path, f"unreadable: {exc.strerror}")
    handoff: message.Handoff | None = None
    elsewhere = remote.roles if remote is not None else {}
    try:
        handoff = flagged(unchecked(message.parse(data, path)), path)
        checks = MergeChecks(handoff, name, outbox.sender(path).worktree)
        copied: list[str] = []
        held: list[str] = []
        for role in plan(handoff, name, roles, elsewhere):
            check = checks.against(role, roles[role])
            try:
                if copy_to(handoff, name, role, roles[role], check.headers() if check else None):
                    copied.append(role)
                    checks.delivered(role, check)
            except UnsafeMailbox as exc:
                held.append(exc.message)
        published = [r for r in recipients_of(handoff, {**elsewhere, **roles}) if r in elsewhere]
        if published and remote is not None:
            try:
                remote.send(path, handoff, published)
            except SwarmforgeError as exc:
                held.append(exc.message)
                published = []
        if held:
            return Outcome(name, HELD, copied, "; ".join(held), handoff, checks, published)
        archive(path)
    except CorruptFile as exc:
        return _failed(path, f"malformed: {exc}")
    except Undeliverable as exc:
        return _failed(path, str(exc), handoff)
    return Outcome(name, DELIVERED, copied, handoff=handoff, checks=checks, published=published)


def _failed(path: str, reason: str, handoff: message.Handoff | None = None) -> Outcome:
    fail(path, reason)
    return Outcome(Path(path).name, FAILED, reason=reason, handoff=handoff)
