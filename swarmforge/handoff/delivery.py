"""Delivery of one outbox file to every recipient, the Maildir way.

For each recipient the copy (stamped `recipient` and `enqueued_at`) is written
under a hidden temporary name in the recipient's `inbox/new/`, flushed, and
hard-linked to its final name, which fails rather than replaces if the name
exists. The original is archived in `sent/` only after every copy exists, so a
crash at any instant is completed by a retry that never makes a second copy.

Each copy of a git_handoff also says whether its commit merges cleanly into that
recipient's branch (swarmforge/git/mergecheck.py): a check that git cannot answer
leaves the copy without the result, never holds it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

from swarmforge import fsutil, text, times
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.git import command, mergecheck
from swarmforge.git.objects import state_dirs_in
from swarmforge.handoff import message
from swarmforge.handoff.draft import HEX
from swarmforge.handoff.mailbox import (
    NAME_FORMAT,
    SUFFIX,
    Box,
    Mailbox,
    UnsafeMailbox,
    name_problem,
)
from swarmforge.layout import HANDOFFS
from swarmforge.roletable import RoleEntry

# HELD: a recipient's mailbox is unsafe (UnsafeMailbox); the original stays in the outbox
# until it is repaired, and the other recipients have their copies meanwhile.
DELIVERED, FAILED, GONE, HELD = "delivered", "failed", "gone", "held"
TRACKED = "tracked by git: handoffs come only from the gate"


class Outcome:
    """What became of one outbox file."""

    __slots__ = (
        "conflicts",
        "copied",
        "name",
        "priority",
        "published",
        "reason",
        "sender",
        "status",
        "unchecked",
    )

    def __init__(
        self,
        name: str,
        status: str,
        copied: list[str] | None = None,
        reason: str = "",
        handoff: message.Handoff | None = None,
        checks: MergeChecks | None = None,
        published: list[str] | None = None,
    ) -> None:
        self.name = name
        self.status = status
        self.copied = copied or []  # recipients that got their copy in this attempt
        self.published = published or []  # recipients on other hosts it was sent to
        self.reason = reason
        # The merge checks of those copies, for the daemon: a `merge-conflict` event's
        # fields per conflict, and a line for its log per check git could not answer.
        self.conflicts = checks.conflicts if checks else []
        self.unchecked = checks.problems if checks else []
        # From the handoff's headers, when it could be read (for the event log).
        self.sender = (handoff.get("from") or "") if handoff else ""
        self.priority = (handoff.get("priority") or "") if handoff else ""


class Undeliverable(Exception):
    """The file cannot be delivered; the message says why."""


class Remote(Protocol):
    """The way to roles that other hosts run (swarmforge/daemon/crossing.py)."""

    @property
    def roles(self) -> Mapping[str, str]:
        """Each role another host runs, with that host's name."""

    def send(self, path: str, handoff: message.Handoff, recipients: list[str]) -> None:
        """Hand the handoff at `path` to `recipients`, durably, or raise SwarmforgeError
        (the original then stays in the outbox) or Undeliverable."""


def pending(outbox: str) -> list[str]:
    """Finished handoffs waiting in `outbox` (never `outbox/tmp/`), in name order."""
    try:
        entries = list(os.scandir(outbox))
    except FileNotFoundError:
        return []
    # Anything named *.handoff that is not a directory is an item: a symlink, a FIFO
    # or an unreadable file must go to failed/, not lie in the outbox forever.
    return sorted(
        e.path
        for e in entries
        if e.name.endswith(SUFFIX)
        and not e.name.startswith(".")
        and not e.is_dir(follow_symlinks=True)
    )


def tracked(worktree: str) -> set[str]:
    """Names of the files in the outbox of `worktree` that git tracks there.

    Such a file came with a commit, not from the gate, so it is never delivered. A
    directory git does not know (ls-files fails) tracks nothing.
    """
    outbox = os.path.join(HANDOFFS, Box.OUTBOX)
    result = command.run(worktree, "ls-files", "-z", "--", outbox)
    if not result.ok:
        return set()
    paths = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {os.path.basename(p) for p in paths if p and os.path.dirname(p) == outbox}


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
    return Mailbox(entry.path).deliver_copy(name, copy)


def _sender(path: str) -> Mailbox:
    """The mailbox whose outbox holds `path` (<worktree>/.swarmforge/handoffs/outbox/X)."""
    return Mailbox(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(path)))))


def fail(path: str, reason: str) -> None:
    """Move an undeliverable outbox file to failed/ beside a `<name>.error` saying why."""
    _sender(path).set_aside(path, reason)


def archive(path: str) -> None:
    """Move a delivered original from outbox/ to the sender's sent/."""
    try:
        _sender(path).archive(path)
    except FileExistsError:
        # Already archived once under this name: the outbox file is a duplicate.
        raise Undeliverable(f"a handoff named {os.path.basename(path)} was already sent") from None


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
    name = os.path.basename(path)
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
        handoff = _flagged(unchecked(message.parse(data, path)), path)
        checks = MergeChecks(handoff, name, _sender(path).worktree)
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


def unchecked(handoff: message.Handoff) -> message.Handoff:
    """`handoff` without merge-check headers: only the daemon writes them, on each copy.

    The gate refuses them in a draft, but a file put in an outbox by hand bypasses
    the gate; a result it forged must not survive a check that git cannot answer.
    """
    if all(field not in mergecheck.HEADERS for field, _ in handoff.headers):
        return handoff
    kept = [(f, v) for f, v in handoff.headers if f not in mergecheck.HEADERS]
    return message.Handoff(kept, handoff.body)


class MergeChecks:
    """The merge checks of one handoff's commit, one per recipient's branch.

    The commit is looked up once, the first time a recipient needs it; each
    recipient's own branch is then merged with it in memory (mergecheck.against).
    What git could not answer is said once, and only for a copy that went out: a
    file held in the outbox is checked again on every pass.
    """

    def __init__(self, handoff: message.Handoff, name: str, sender: str) -> None:
        commit = handoff.get("commit") or ""
        # Only what the gate writes is looked up: never a value git could read as an option.
        wanted = handoff.get("type") == "git_handoff" and commit and all(c in HEX for c in commit)
        self.commit = commit if wanted else ""
        self.name = text.shown(name)
        self.sender = handoff.get("from") or ""
        self.worktree = sender  # where the commit is looked up: the repository is shared
        self.oid: str | None = None
        self.looked_up = False
        self.lookup_failed = ""  # why the commit could not be looked up
        self.skipped: dict[str, str] = {}  # role -> why its branch could not be checked
        self.conflicts: list[dict[str, object]] = []
        self.problems: list[str] = []

    def against(self, role: str, entry: RoleEntry) -> mergecheck.MergeCheck | None:
        """The result for `role`'s copy, or None when there is none to give."""
        if not self.commit or self.lookup_failed:
            return None
        try:
            if not self.looked_up:
                self.looked_up = True
                self.oid = mergecheck.resolve(self.worktree, self.commit)
        except mergecheck.CheckFailed as exc:
            self.lookup_failed = str(exc)
            return None
        if self.oid is None:
            return mergecheck.MergeCheck(mergecheck.MISSING, self.commit)
        try:
            return mergecheck.against(entry.path, self.oid, self.commit)
        except mergecheck.CheckFailed as exc:
            self.skipped[role] = str(exc)
            return None

    def delivered(self, role: str, check: mergecheck.MergeCheck | None) -> None:
        """Note that `role`'s copy went out with `check`: a conflict is an event, a gap a line."""
        if self.lookup_failed:
            self.problems[:] = [f"merge check of {self.name} skipped: {self.lookup_failed}"]
        elif role in self.skipped:
            self.problems.append(
                f"merge check of {self.name} for {role} skipped: {self.skipped[role]}"
            )
        if check is None or check.status != mergecheck.CONFLICT:
            return
        self.conflicts.append(
            {
                "name": self.name,
                "role": role,
                "from": self.sender or None,
                "commit": check.commit,
                "paths": check.paths[: mergecheck.MAX_LISTED],
                "count": len(check.paths),
            }
        )


def _flagged(handoff: message.Handoff, path: str) -> message.Handoff:
    """`handoff` with a `warning` if its commit would merge swarmforge's own state.

    `.swarmforge/` and `.worktrees/` are only git-ignored: a commit can still add them,
    and merging one would replace the recipient's mailboxes with the sender's files.
    """
    commit = handoff.get("commit") or ""
    # Only what the gate writes is looked up: never a value git could read as an option.
    if handoff.get("type") != "git_handoff" or not (commit and all(c in HEX for c in commit)):
        return handoff
    found = state_dirs_in(_sender(path).worktree, commit)
    if not found:
        return handoff
    dirs = ", ".join(f"{text.shown(name)}/" for name in found)
    return handoff.with_header(
        "warning",
        f"commit {commit} contains {dirs}, swarmforge's own state, which is never "
        "committed; do not merge it as it is",
    )


def _failed(path: str, reason: str, handoff: message.Handoff | None = None) -> Outcome:
    fail(path, reason)
    return Outcome(os.path.basename(path), FAILED, reason=reason, handoff=handoff)
