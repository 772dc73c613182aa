"""Each recipient's copy of a handoff: who is still missing one, and publishing it."""

from __future__ import annotations

from collections.abc import Mapping

from swarmforge import times
from swarmforge.errors import CorruptFile
from swarmforge.handoff import message
from swarmforge.handoff.inbox import deliver_copy
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.outcome import Undeliverable
from swarmforge.roletable import RoleEntry


def _existing_copy(box: Mailbox, name: str) -> str | None:
    found = box.locate(name)
    return found[1] if found else None


def is_same_handoff(path: str, handoff_id: str | None) -> bool:
    try:
        return message.read(path).get("id") == handoff_id
    except (OSError, CorruptFile):
        return False


def recipients_of(handoff: message.Handoff, known: Mapping[str, object]) -> list[str]:
    """The handoff's recipients, each one of `known`; Undeliverable otherwise."""
    recipients = (handoff.get("to") or "").split(",")
    if recipients == [""]:
        raise Undeliverable("the handoff has no 'to' header")
    for role in recipients:
        if role not in known:
            raise Undeliverable(f"unknown recipient role '{role}'")
    return recipients


def plan(
    handoff: message.Handoff,
    name: str,
    roles: dict[str, RoleEntry],
    remote: Mapping[str, str] | None = None,
) -> list[str]:
    """The recipients here still missing their copy; Undeliverable before any copy is made.

    A recipient in `remote` (another host's role) is known, but has no copy here.
    """
    missing: list[str] = []
    seen: set[str] = set()
    here = [r for r in recipients_of(handoff, {**(remote or {}), **roles}) if r in roles]
    for role in here:
        box = Mailbox(roles[role].path)
        if box.root in seen:
            continue  # two roles sharing one worktree share one mailbox
        seen.add(box.root)
        if box.problem(Box.NEW, Box.IN_PROCESS, Box.COMPLETED):
            missing.append(role)  # copy_to refuses it; nothing is looked up through a link
            continue
        existing = _existing_copy(box, name)
        if existing is None:
            missing.append(role)
        elif not is_same_handoff(existing, handoff.get("id")):
            raise Undeliverable(f"a different handoff named {name} is already in {existing}")
    return missing


def copy_to(
    handoff: message.Handoff,
    name: str,
    role: str,
    entry: RoleEntry,
    extra: list[tuple[str, str]] | None = None,
) -> bool:
    """Publish the recipient's copy in its inbox/new/; False if it appeared meanwhile.

    `extra`: headers for this copy alone (its merge check), set before `enqueued_at`.
    """
    copy = handoff.with_header("recipient", role)
    for field, value in extra or []:
        copy = copy.with_header(field, value)
    copy = copy.with_header("enqueued_at", times.stamp())
    return deliver_copy(Mailbox(entry.path), name, copy)
