"""`repair`: put work stuck in a role's `inbox/in_process/` back in its queue.

An item stays in process until the role that took it runs `done`. When that role's
agent is gone (no swarm runs, or its process died) or has exited, nobody will, and in
task mode everything queued behind it waits too. repair returns each such item to
`inbox/new/` under its own name, so it keeps its place by priority and time, with two
headers added (`requeued_at`, and `requeue_count`, one more on every repair) and every
other byte as it was. Of a batch that a `done` left half finished, only the items
without `completed_at` go back; the finished ones are moved to `completed/` as that
`done` would have. `--older-than` also takes back work held longer than that, whoever
holds it.

Crash safety: the copy is written under a temporary name in `new/` and linked to the
item's name, which never replaces a file, and only then is the in-process file removed.
A repair killed between the two leaves both; the next one finds the copy under the
same name and only removes the original, so an item is never lost nor doubled.

The receive helpers take no lock: taking and finishing work are renames, and the one
that renames first wins. repair keeps to that: if the original was finished by its
role while the copy was being made, the copy is taken back before anyone can see a
second one, and if that is too late the item is reported, not hidden.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import Literal

from swarmforge import events, fsutil, roletable, times
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import mailbox as mb
from swarmforge.handoff import message
from swarmforge.handoff.inbox import queue_copy, take_back
from swarmforge.handoff.mailbox import Box, Mailbox, UnsafeMailbox
from swarmforge.handoff.message import Handoff
from swarmforge.layout import ROLES_TSV
from swarmforge.swarm.status.role import RoleStatus
from swarmforge.swarm.status.summary import status

REQUEUED_AT = "requeued_at"
REQUEUE_COUNT = "requeue_count"
EVENT = "handoff-requeued"
NO_SWARM = "no swarm running"
GONE = "agent gone"
EXITED = "agent exited"

# What a repair did (or, dry, would do) with one item.
REQUEUED = "requeued"  # back in inbox/new
COMPLETED = "completed"  # it was finished already: moved to completed/
LEFT = "left"  # left where it is, for the reason in `problem`


@dataclass(frozen=True)
class Repair:
    """One item repair found stuck, why, and where it went (or would go)."""

    role: str
    file: str  # where the item was
    reason: str  # why it counts as stuck: no swarm running, agent gone or exited, its age
    action: str  # REQUEUED, COMPLETED or LEFT
    destination: str | None = None
    requeue_count: int | None = None
    problem: str | None = None  # why it was left

    def as_json(self) -> dict[str, object]:
        return asdict(self)

    def line(self, dry_run: bool) -> str:
        """The item as one line of the command's report."""
        head = f"{self.role}: {os.path.basename(self.file)} ({self.reason}): "
        if self.action == LEFT:
            return head + f"left in place: {self.problem}"
        verb = {REQUEUED: "requeued", COMPLETED: "moved to completed"}[self.action]
        verb = f"would be {verb}" if dry_run else verb
        count = f", requeue_count {self.requeue_count}" if self.requeue_count else ""
        return head + f"{verb}: {self.destination}{count}"


@dataclass(frozen=True)
class RepairReport:
    """Everything one repair found, and whether it could all be repaired."""

    project: str
    dry_run: bool
    older_than: str | None
    repairs: list[Repair]

    @property
    def ok(self) -> bool:
        """True if nothing was left in place."""
        return all(r.action != LEFT for r in self.repairs)

    def as_json(self) -> dict[str, object]:
        return {
            "project": self.project,
            "dry_run": self.dry_run,
            "older_than": self.older_than,
            "ok": self.ok,
            "repairs": [r.as_json() for r in self.repairs],
        }


@dataclass(frozen=True)
class Holder:
    """The roles working in one mailbox, and why their agent counts as gone (None: alive)."""

    roles: tuple[str, ...]
    path: str
    gone: str | None


def age_limit(text: str | None) -> float | None:
    """`--older-than` in seconds (None when not given); one clear error for a bad value."""
    if text is None:
        return None
    from swarmforge.config.fields import duration_seconds

    try:
        return duration_seconds(text)
    except ValueError as exc:
        raise SwarmforgeError(f"--older-than: {exc}.") from None


def repair(root: str, *, dry_run: bool = False, older_than: str | None = None) -> RepairReport:
    """Find the stuck work of every role of the project at `root` and return it to its queue.

    With `dry_run`, report what would be done and change nothing.
    """
    limit = age_limit(older_than)
    root = os.path.realpath(root)
    now = time.time()
    found: list[Repair] = []
    for holder in holders(root):
        fixer = _Fixer(root, holder, dry_run)
        found += fixer.mailbox(limit, older_than or "", now)
    return RepairReport(root, dry_run, older_than, found)


# -- whose agent is gone -------------------------------------------------------------------


def holders(root: str) -> list[Holder]:
    """Every mailbox of the project's roles, with whether its agent is gone, as `status` sees it.

    With no run recorded, the roles come from roles.tsv and every agent is gone.
    """
    swarm = status(root)
    if swarm.run_id is None:
        return _group([(name, path, NO_SWARM) for name, path in _table(root)])
    running = swarm.state == "running"
    return _group([(r.role, r.path, _gone(r) if running else NO_SWARM) for r in swarm.roles])


def _table(root: str) -> list[tuple[str, str]]:
    """(role, path) of each role in roles.tsv; none if there is no table."""
    if not os.path.isfile(os.path.join(root, ROLES_TSV)):
        return []
    return [(name, entry.path) for name, entry in roletable.read_roles(root).items()]


def _gone(role: RoleStatus) -> str | None:
    """Why the agent of `role` counts as gone, or None while it works."""
    exited = role.agent_state is not None and role.agent_state.state == "exited"
    if exited or role.process.state == "exited":
        return EXITED
    return None if role.alive else GONE


def _group(roles: list[tuple[str, str, str | None]]) -> list[Holder]:
    """One Holder per mailbox: roles sharing a worktree share one, alive if any of them is."""
    by_path: dict[str, list[tuple[str, str | None]]] = {}
    for name, path, gone in roles:
        by_path.setdefault(os.path.realpath(path), []).append((name, gone))
    held = []
    for path, members in by_path.items():
        reasons = [gone for _, gone in members]
        gone = None if None in reasons else reasons[0]
        held.append(Holder(tuple(name for name, _ in members), path, gone))
    return held


# -- repairing one mailbox -----------------------------------------------------------------


def _age(items: list[str], now: float) -> float:
    """How long the work made of `items` has been in process: since its earliest dequeued_at,
    or its file's time when no item says."""
    ages = []
    for path in items:
        try:
            stamp = message.read(path).get("dequeued_at")
            if stamp:
                ages.append(now - times.parse(stamp))
                continue
            ages.append(now - os.lstat(path).st_mtime)
        except (OSError, CorruptFile, ValueError):
            continue
    return max(ages, default=0.0)


def stamped(handoff: Handoff, now: float | None = None) -> Handoff:
    """`handoff` with `requeued_at` set and `requeue_count` one more than it was."""
    count = handoff.get(REQUEUE_COUNT) or "0"
    previous = int(count) if count.isascii() and count.isdigit() else 0
    return handoff.with_header(REQUEUED_AT, times.stamp(now)).with_header(
        REQUEUE_COUNT, str(previous + 1)
    )


def _unstamped(handoff: Handoff) -> Handoff:
    """`handoff` without the headers a repair adds: what a copy and its original share."""
    kept = [(n, v) for n, v in handoff.headers if n not in (REQUEUED_AT, REQUEUE_COUNT)]
    return Handoff(kept, handoff.body)


def _count(handoff: Handoff) -> int | None:
    value = handoff.get(REQUEUE_COUNT) or ""
    return int(value) if value.isascii() and value.isdigit() else None


class _Fixer:
    """Repairs the work in process in one mailbox, for the roles working there."""

    def __init__(self, root: str, holder: Holder, dry_run: bool) -> None:
        self.root = root
        self.holder = holder
        self.dry_run = dry_run
        self.box = Mailbox(holder.path)

    def mailbox(self, limit: float | None, limit_text: str, now: float) -> list[Repair]:
        """Repair every task and batch in process whose agent is gone or that is too old."""
        try:
            self.box.check(Box.NEW, Box.IN_PROCESS, Box.COMPLETED)
        except UnsafeMailbox as exc:
            # Its work cannot be read safely, let alone moved: said when it may be stuck.
            gone = self.holder.gone
            return [] if gone is None else [self._left(exc.path, None, gone, exc.message)]
        found: list[Repair] = []
        work = [[p] for p in self.box.items(Box.IN_PROCESS)]
        work += [mb.items_in(b) for b in self.box.batches()]
        for items in work:
            if not items:
                continue  # an empty batch a killed `ready` left: the receive helpers drop it
            reason = self.holder.gone
            if reason is None and limit is not None and _age(items, now) >= limit:
                reason = f"in process longer than {limit_text}"
            if reason is not None:
                found += self._work(items, reason)
        return found

    def _role(self, handoff: Handoff | None) -> str:
        """The role an item belongs to: its recipient, when several roles share the mailbox."""
        recipient = handoff.get("recipient") if handoff is not None else None
        if len(self.holder.roles) > 1 and recipient in self.holder.roles:
            return recipient or ""
        return ",".join(self.holder.roles)

    def _left(self, path: str, handoff: Handoff | None, reason: str, problem: str) -> Repair:
        return Repair(self._role(handoff), path, reason, LEFT, problem=problem)

    def _work(self, items: list[str], reason: str) -> list[Repair]:
        """Repair one task, or one batch (`items` in a batch directory)."""
        finished: list[tuple[str, Handoff]] = []
        found = []
        for path in items:
            try:
                handoff = message.read(path)
            except (OSError, CorruptFile) as exc:
                problem = exc.message if isinstance(exc, CorruptFile) else str(exc)
                found.append(self._left(path, None, reason, f"unreadable: {problem}"))
                continue
            if handoff.get("completed_at"):
                finished.append((path, handoff))
            else:
                found.append(self._requeue(path, handoff, reason))
        if any(r.action == LEFT for r in found):
            # The finished items stay with the ones that could not go back, for a person.
            problem = "other items of its batch could not be returned to the queue"
            return found + [self._left(p, h, reason, problem) for p, h in finished]
        if finished:
            return found + self._finish(items[0], finished, reason)
        if self._in_batch(items[0]) and not self.dry_run:
            _remove_empty(os.path.dirname(items[0]))
        return found

    def _in_batch(self, path: str) -> bool:
        return os.path.dirname(path) != self.box.path(Box.IN_PROCESS)

    # -- back to the queue -------------------------------------------------------------------

    def _requeue(self, path: str, handoff: Handoff, reason: str) -> Repair:
        """Return the item at `path` to inbox/new: copy first, then remove the original."""
        role = self._role(handoff)
        name = os.path.basename(path)
        target = self.box.path(Box.NEW, name)
        copy = stamped(handoff)
        twin = _twin(target, handoff)
        if twin is None and not self.dry_run and not queue_copy(self.box, name, copy):
            # Made meanwhile: only a repair running at the same time makes one.
            twin = _twin(target, handoff)
        if twin is False:
            problem = f"a different handoff of that name is already queued: {target}"
            return self._left(path, handoff, reason, problem)
        count = _count(twin if twin is not None else copy)
        done = Repair(role, path, reason, REQUEUED, target, count)
        if self.dry_run:
            return done
        try:
            os.unlink(path)
        except FileNotFoundError:
            return self._raced(done, target)
        fsutil.fsync_dir(os.path.dirname(path))
        events.EventLog(self.root).emit(
            EVENT,
            {"role": role, "name": os.path.basename(path), "count": count, "reason": reason},
        )
        return done

    def _raced(self, done: Repair, target: str) -> Repair:
        """The original vanished while its copy was made: a concurrent repair removed it (the
        copy stands), or its role finished it (the copy is taken back)."""
        where = self.box.locate(os.path.basename(target))
        if where is None or where[0] != Box.COMPLETED:
            return done
        problem = f"its role finished it meanwhile: {where[1]}"
        if not take_back(target):
            problem += f"; the copy made for the queue was taken already: {target}"
        return Repair(done.role, done.file, done.reason, LEFT, where[1], problem=problem)

    # -- finished already --------------------------------------------------------------------

    def _finish(self, first: str, finished: list[tuple[str, Handoff]], reason: str) -> list[Repair]:
        """Move items a killed `done` stamped but did not move to completed/: a task by
        itself, a batch's finished items with their directory."""
        batch = self._in_batch(first)
        source = os.path.dirname(first) if batch else first
        target = self.box.path(Box.COMPLETED, os.path.basename(source))
        where = [
            os.path.join(target, os.path.basename(p)) if batch else target for p, _ in finished
        ]
        if os.path.lexists(target):
            problem = f"one of that name is already completed: {target}"
            return [self._left(p, h, reason, problem) for p, h in finished]
        if not self.dry_run:
            self.box.ensure(Box.COMPLETED)
            mb.move(source, target)
            self._completed(where, finished, os.path.basename(target) if batch else "")
        return [
            Repair(self._role(h), p, reason, COMPLETED, w)
            for (p, h), w in zip(finished, where, strict=True)
        ]

    def _completed(self, paths: list[str], finished: list[tuple[str, Handoff]], batch: str) -> None:
        """The `handoff-completed` events the killed `done` did not write."""
        fields = []
        for path, (_, handoff) in zip(paths, finished, strict=True):
            item: dict[str, object] = {"name": os.path.basename(path), "role": self._role(handoff)}
            for key in ("from", "priority"):
                if handoff.get(key):
                    item[key] = handoff.get(key)
            if batch:
                item["batch"] = batch
            fields.append(item)
        events.EventLog(self.root).emit_many(("handoff-completed", f) for f in fields)


def _twin(target: str, original: Handoff) -> Handoff | Literal[False] | None:
    """The copy of `original` already at `target` (a repair was killed after making it), None
    if there is none, False if another handoff holds that name."""
    try:
        there = message.read(target)
    except FileNotFoundError:
        return None
    except (OSError, CorruptFile):
        return False
    return there if _unstamped(there) == _unstamped(original) else False


def _remove_empty(directory: str) -> None:
    """Remove a batch directory all of whose items went back to the queue."""
    try:
        os.rmdir(directory)  # kept if anything else is in it: the receive helpers decide
    except OSError:
        return
    fsutil.fsync_dir(os.path.dirname(directory))
