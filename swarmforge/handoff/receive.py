"""The receive helpers: accept the next task or batch, complete the current one.

Every refusal, message and exit code follows docs/protocol.md ("Receiving work"). The
helpers never guess: a state they cannot read one way is refused, not repaired. The
one state they repair is their own: an empty batch directory that a `ready` killed
between making it and filling it left behind.

Each accepted, completed or set-aside item is an event in the project's log
(events.py), naming the role from the `recipient` header delivery stamped on its copy.
"""

from __future__ import annotations

import os
import time

from swarmforge import events, fsutil, roletable, times
from swarmforge.errors import CorruptFile, Refused, SwarmforgeError
from swarmforge.handoff import mailbox as mb
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.message import Handoff
from swarmforge.handoff.printout import Batch, Task

CLAIM_ATTEMPTS = 5  # another claimer of the same mailbox can win a race; look again
# An empty batch directory older than this was left by a killed `ready`; a younger one
# may be another `ready` of the same role about to move its items in.
STALE_EMPTY_BATCH = 10.0


def drop_stale_empty_batches(box: Mailbox, now: float | None = None) -> list[str]:
    """Remove in-process batch directories that a killed `ready` left empty; their paths."""
    dropped = []
    for directory in box.batches():
        try:
            if os.listdir(directory):
                continue
            age = (time.time() if now is None else now) - os.lstat(directory).st_mtime
            if age >= STALE_EMPTY_BATCH:
                os.rmdir(directory)  # fails, and keeps it, if an item arrived meanwhile
                dropped.append(directory)
        except OSError:
            continue
    return dropped


def _project(box: Mailbox) -> str | None:
    """The project whose log gets the events of `box`, or None if it cannot be found."""
    try:
        return roletable.find_root(box.worktree)
    except (SwarmforgeError, OSError):
        return None


def _fields(path: str, handoff: Handoff | None, **more: str) -> dict[str, object]:
    """An event's fields for the item at `path`: name, role, sender, priority, and `more`."""
    fields: dict[str, object] = {"name": os.path.basename(path)}
    if handoff is not None:
        for key, header in (("role", "recipient"), ("from", "from"), ("priority", "priority")):
            value = handoff.get(header)
            if value:
                fields[key] = value
    fields.update((k, v) for k, v in more.items() if v)
    return fields


def _emit(box: Mailbox, kind: str, items: list[dict[str, object]]) -> None:
    """Append one event of `kind` per item, with one write."""
    root = _project(box) if items else None
    if root is not None:
        events.EventLog(root).emit_many((kind, item) for item in items)


def _completed(box: Mailbox, paths: list[str], batch: str = "") -> None:
    """The `handoff-completed` events of the items just completed to `paths`."""
    items = []
    for path in paths:
        try:
            handoff: Handoff | None = message.read(path)
        except (OSError, CorruptFile):
            handoff = None
        outcome = (handoff.get("outcome") or "") if handoff else ""
        code = (handoff.get("exit_code") or "") if handoff else ""
        items.append(_fields(path, handoff, batch=batch, outcome=outcome, exit_code=code))
    _emit(box, "handoff-completed", items)


def _set_aside(box: Mailbox, aside: list[SetAside]) -> None:
    """The `handoff-set-aside` events of files just set aside, naming the mailbox's role."""
    if not aside:
        return
    root = _project(box)
    if root is None:
        return
    try:
        here = [n for n, e in roletable.read_roles(root).items() if e.path == box.worktree]
    except (SwarmforgeError, OSError):
        here = []
    role = here[0] if len(here) == 1 else ""  # roles sharing the main checkout: unknown
    fields = [_fields(a.path, None, role=role, reason=a.reason) for a in aside]
    events.EventLog(root).emit_many(("handoff-set-aside", f) for f in fields)


def _listing(paths: list[str]) -> tuple[str, ...]:
    return tuple(f"- {p}" for p in paths)


def _resume(path: str) -> Task:
    return Task(path, mb.resume(path))


class SetAside:
    """A queued file that could not be read as a handoff, moved to failed/ with its reason."""

    __slots__ = ("path", "reason")

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason

    def line(self) -> str:
        """How the helpers report it on stderr."""
        return f"SET_ASIDE: {self.path}: {self.reason}"


def _readable(box: Mailbox, queued: list[str], aside: list[SetAside]) -> list[tuple[str, Handoff]]:
    """The queued files that read as handoffs; the others are set aside, never in the way."""
    found = []
    for path in queued:
        try:
            found.append((path, message.read(path)))
        except FileNotFoundError:
            continue  # taken by another claimer meanwhile
        except CorruptFile as exc:
            aside.append(SetAside(box.set_aside(path, exc.message), exc.message))
            _set_aside(box, aside[-1:])
    return found


def ready_task(box: Mailbox, aside: list[SetAside] | None = None) -> Task | None:
    """Accept the next task (or resume the current one); None when the queue is empty.

    A queued file that is no handoff is set aside (listed in `aside`) and the next taken.
    """
    aside = [] if aside is None else aside
    box.ensure(Box.NEW, Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    for _ in range(CLAIM_ATTEMPTS):
        batches = box.batches()
        if batches:
            raise Refused(
                "TASK_IN_PROCESS_IS_BATCH: use ready_for_next.sh or done_with_current.sh.",
                details=_listing(batches),
            )
        current = box.items(Box.IN_PROCESS)
        if len(current) > 1:
            raise Refused(
                "AMBIGUOUS_TASK_STATE: multiple tasks are already in process.",
                details=_listing(current),
            )
        if current:
            return _resume(current[0])
        queued = box.items(Box.NEW)
        first: list[tuple[str, Handoff]] = []
        while queued and not first:
            first = _readable(box, [queued.pop(0)], aside)
        if not first:
            return None
        task = _claim(*first[0], box.path(Box.IN_PROCESS))
        if task is not None:
            _emit(box, "handoff-dequeued", [_fields(task.path, task.handoff)])
            return task
    raise SwarmforgeError("Could not take a task: other processes keep taking them first.")


def _claim(src: str, handoff: Handoff, directory: str) -> Task | None:
    """Move queued `src` (parsed as `handoff`) into `directory` and stamp dequeued_at;
    None if another took it."""
    dst = os.path.join(directory, os.path.basename(src))
    if os.path.lexists(dst):
        raise Refused(f"AMBIGUOUS_TASK_STATE: target in-process file already exists: {dst}")
    try:
        return Task(dst, mb.accept(src, dst, handoff))
    except FileNotFoundError:
        return None


def _batch_items(directory: str) -> list[str]:
    items = mb.items_in(directory)
    if not items:
        raise Refused(f"AMBIGUOUS_TASK_STATE: batch contains no tasks: {directory}")
    return items


def _new_batch_dir(box: Mailbox) -> str:
    stamp = times.compact()
    n = 1
    while True:
        name = f"{mb.BATCH_PREFIX}{stamp}_{n:06d}"
        n += 1
        if os.path.lexists(box.path(Box.COMPLETED, name)):
            continue  # a batch completed within the same second: never reuse its name
        try:
            os.mkdir(box.path(Box.IN_PROCESS, name), fsutil.DIR_MODE)
        except FileExistsError:
            continue
        return box.path(Box.IN_PROCESS, name)


def ready_batch(box: Mailbox, aside: list[SetAside] | None = None) -> Batch | None:
    """Accept every queued item of the top priority as one batch (or resume the current one).

    Queued files that are no handoffs are set aside (listed in `aside`).
    """
    aside = [] if aside is None else aside
    box.ensure(Box.NEW, Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    for _ in range(CLAIM_ATTEMPTS):
        singles = box.items(Box.IN_PROCESS)
        if singles:
            raise Refused(
                "TASK_IN_PROCESS_IS_SINGLE: use ready_for_next.sh or done_with_current.sh.",
                details=_listing(singles),
            )
        batches = box.batches()
        if len(batches) > 1:
            raise Refused(
                "AMBIGUOUS_TASK_STATE: multiple batches are already in process.",
                details=_listing(batches),
            )
        if batches:
            return Batch(batches[0], [_resume(p) for p in _batch_items(batches[0])])
        queued = _readable(box, box.items(Box.NEW), aside)
        if not queued:
            return None
        top = queued[0][1].get("priority") or "50"
        chosen = [(p, h) for p, h in queued if (h.get("priority") or "50") == top]
        directory = _new_batch_dir(box)
        taken = [t for t in (_claim(p, h, directory) for p, h in chosen) if t is not None]
        if taken:
            batch = os.path.basename(directory)
            _emit(box, "handoff-dequeued", [_fields(t.path, t.handoff, batch=batch) for t in taken])
            return Batch(directory, taken)
        os.rmdir(directory)  # every item went to a faster claimer
    raise SwarmforgeError("Could not take a batch: other processes keep taking items first.")


def done_task(box: Mailbox) -> list[str]:
    """Complete the task in process; the path it was completed to."""
    box.ensure(Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    batches = box.batches()
    if batches:
        raise Refused("CURRENT_WORK_IS_BATCH: use done_with_current.sh.", details=_listing(batches))
    current = box.items(Box.IN_PROCESS)
    if not current:
        raise SwarmforgeError("NO_CURRENT_TASK")
    if len(current) > 1:
        raise Refused(
            "AMBIGUOUS_TASK_STATE: multiple tasks are in process.", details=_listing(current)
        )
    src = current[0]
    dst = box.path(Box.COMPLETED, os.path.basename(src))
    if os.path.lexists(dst):
        raise Refused(f"AMBIGUOUS_TASK_STATE: completed file already exists: {dst}")
    mb.complete(src, dst)
    _completed(box, [dst])
    return [dst]


def done_batch(box: Mailbox) -> tuple[list[str], str]:
    """Complete the batch in process; its items' new paths and the batch's new directory."""
    box.ensure(Box.IN_PROCESS, Box.COMPLETED)
    drop_stale_empty_batches(box)
    singles = box.items(Box.IN_PROCESS)
    if singles:
        raise Refused(
            "CURRENT_WORK_IS_SINGLE_TASK: use done_with_current.sh.", details=_listing(singles)
        )
    batches = box.batches()
    if not batches:
        raise SwarmforgeError("NO_CURRENT_BATCH")
    if len(batches) > 1:
        raise Refused(
            "AMBIGUOUS_TASK_STATE: multiple batches are in process.", details=_listing(batches)
        )
    src = batches[0]
    items = _batch_items(src)
    dst = box.path(Box.COMPLETED, os.path.basename(src))
    if os.path.lexists(dst):
        raise Refused(f"AMBIGUOUS_TASK_STATE: completed batch already exists: {dst}")
    mb.complete_batch(src, dst, items)
    done = [os.path.join(dst, os.path.basename(p)) for p in items]
    _completed(box, done, os.path.basename(dst))
    return done, dst


def receive_mode(cwd: str, role: str) -> str:
    """The caller's receive mode from roles.tsv: `task` or `batch`."""
    if not role:
        raise SwarmforgeError("Set SWARMFORGE_ROLE.")
    roles = roletable.read_roles(roletable.find_root(cwd))
    entry = roles.get(role)
    if entry is None:
        raise SwarmforgeError(f"Unknown role: {role}")
    if entry.mode not in roletable.RECEIVE_MODES:
        raise Refused(f"INVALID_RECEIVE_MODE: {entry.mode} for role {role}")
    return entry.mode
