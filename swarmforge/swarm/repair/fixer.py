"""Repairing one mailbox: each task or batch in process back in its queue, or completed."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge import events, fsutil, times
from swarmforge.errors import CorruptFile
from swarmforge.handoff import mailbox as mb
from swarmforge.handoff import message
from swarmforge.handoff.inbox import queue_copy, take_back
from swarmforge.handoff.mailbox import Box, Mailbox, UnsafeMailbox
from swarmforge.handoff.message import Handoff
from swarmforge.swarm.repair.copies import queued_twin, requeue_count, stamped
from swarmforge.swarm.repair.holders import Holder
from swarmforge.swarm.repair.report import COMPLETED, LEFT, REQUEUED, Repair

EVENT = "handoff-requeued"


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


class Fixer:
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
            _remove_empty(Path(items[0]).parent)
        return found

    def _in_batch(self, path: str) -> bool:
        return Path(path).parent != Path(self.box.path(Box.IN_PROCESS))

    # -- back to the queue -------------------------------------------------------------------

    def _requeue(self, path: str, handoff: Handoff, reason: str) -> Repair:
        """Return the item at `path` to inbox/new: copy first, then remove the original."""
        role = self._role(handoff)
        item = Path(path)
        name = item.name
        target = self.box.path(Box.NEW, name)
        copy = stamped(handoff)
        twin = queued_twin(target, handoff)
        if twin is None and not self.dry_run and not queue_copy(self.box, name, copy):
            # Made meanwhile: only a repair running at the same time makes one.
            twin = queued_twin(target, handoff)
        if twin is False:
            problem = f"a different handoff of that name is already queued: {target}"
            return self._left(path, handoff, reason, problem)
        count = requeue_count(twin if twin is not None else copy)
        done = Repair(role, path, reason, REQUEUED, target, count)
        if self.dry_run:
            return done
        try:
            item.unlink()
        except FileNotFoundError:
            return self._raced(done, target)
        fsutil.fsync_dir(str(item.parent))
        events.EventLog(self.root).emit(
            EVENT, {"role": role, "name": name, "count": count, "reason": reason}
        )
        return done

    def _raced(self, done: Repair, target: str) -> Repair:
        """The original vanished while its copy was made: a concurrent repair removed it (the
        copy stands), or its role finished it (the copy is taken back)."""
        where = self.box.locate(Path(target).name)
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
        source = Path(first).parent if batch else Path(first)
        target = Path(self.box.path(Box.COMPLETED, source.name))
        where = [str(target / Path(p).name) if batch else str(target) for p, _ in finished]
        if os.path.lexists(target):
            problem = f"one of that name is already completed: {target}"
            return [self._left(p, h, reason, problem) for p, h in finished]
        if not self.dry_run:
            self.box.ensure(Box.COMPLETED)
            mb.move(str(source), str(target))
            self._completed(where, finished, target.name if batch else "")
        return [
            Repair(self._role(h), p, reason, COMPLETED, w)
            for (p, h), w in zip(finished, where, strict=True)
        ]

    def _completed(self, paths: list[str], finished: list[tuple[str, Handoff]], batch: str) -> None:
        """The `handoff-completed` events the killed `done` did not write."""
        fields = []
        for path, (_, handoff) in zip(paths, finished, strict=True):
            item: dict[str, object] = {"name": Path(path).name, "role": self._role(handoff)}
            for key in ("from", "priority"):
                if handoff.get(key):
                    item[key] = handoff.get(key)
            if batch:
                item["batch"] = batch
            fields.append(item)
        events.EventLog(self.root).emit_many(("handoff-completed", f) for f in fields)


def _remove_empty(directory: Path) -> None:
    """Remove a batch directory all of whose items went back to the queue."""
    try:
        directory.rmdir()  # kept if anything else is in it: the receive helpers decide
    except OSError:
        return
    fsutil.fsync_dir(str(directory.parent))
