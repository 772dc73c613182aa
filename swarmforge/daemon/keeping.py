"""Keeping what the daemon delivered until it is done: the views healed, mail put back.

The mailboxes lie out of git's reach (statedir.py), yet an agent can still delete its
own: `rm -rf .swarmforge/` follows the view into the state. So the daemon keeps a copy
of each handoff it delivers, `daemon/delivered/<role>/<name>`, where no role's box lets
it write, until it sees the handoff completed (or set aside as unreadable). Twice a
second it looks for each kept handoff in its recipient's mailbox, in the order a handoff
moves (queued, in process, completed, set aside), so that a move under way is never
missed. One found nowhere on two looks in a row (the second a tenth of a second after
the first) is put back from the copy: into `inbox/in_process/` if it was last seen
there and nothing else is in process, else into `inbox/new/`; never where a copy of it
already is, so no handoff is ever offered twice.

The same pass checks each checkout's `.swarmforge` view and heals it (stateview.ensure).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from swarmforge import events, filewrite, fsutil, roletable, statedir, stateview
from swarmforge.errors import CorruptFile
from swarmforge.handoff import inbox, message
from swarmforge.handoff.mailbox import FLOW, Box, Mailbox, UnsafeMailbox
from swarmforge.layout import DELIVERED_DIR

KEEP_SECONDS = 0.5  # between two passes
RECHECK_SECONDS = 0.1  # after a pass that found a handoff nowhere: the second look
DONE = (Box.COMPLETED, Box.FAILED)


def kept_dir(root: str, role: str) -> Path:
    """Where the daemon keeps the copies of what it delivered to `role`."""
    return Path(statedir.path(root, DELIVERED_DIR), role)


def keep(root: str, role: str, name: str, data: bytes) -> None:
    """Keep a copy of handoff `name` just delivered to `role` (written whole, or not at all)."""
    directory = kept_dir(root, role)
    fsutil.makedirs(str(directory))
    filewrite.atomic_write(str(directory / name), data, durable=False)


def forget(root: str) -> None:
    """Drop every kept copy: the run they belong to has ended (`down --purge`)."""
    import shutil

    shutil.rmtree(statedir.path(root, DELIVERED_DIR), ignore_errors=True)


def where(box: Mailbox, name: str) -> str | None:
    """The box of the received handoff `name`, looked for in the order handoffs move."""
    found = box.locate(name, FLOW)
    if found is not None:
        return found[0]
    return Box.FAILED if os.path.lexists(box.path(Box.FAILED, name)) else None


class Keeper:
    """The daemon's keeping pass (see the module docstring), for the project at `root`."""

    def __init__(self, root: str, log: logging.Logger, wake: Callable[[str], None]) -> None:
        self.root = root
        self.log = log
        self.wake = wake  # tells the daemon a role got mail back
        self.events = events.EventLog(root)
        self.seen: dict[tuple[str, str], str] = {}  # (role, name) -> the box last seen in
        self.missing: set[tuple[str, str]] = set()  # found nowhere on the last pass
        self.failing: dict[tuple[str, str], str] = {}  # why putting back failed, logged once
        self.due = 0.0

    def next_due(self) -> float:
        """When (time.monotonic()) the next pass is due."""
        return self.due

    def poll(self, roles: Mapping[str, roletable.RoleEntry], *, force: bool = False) -> None:
        """Run a pass if one is due."""
        now = time.monotonic()
        if not force and now < self.due:
            return
        self.due = now + KEEP_SECONDS
        self.heal([self.root, *(e.path for e in roles.values())])
        for role, entry in roles.items():
            self._look(role, entry.path)
        if self.missing:
            self.due = now + RECHECK_SECONDS

    def heal(self, checkouts: list[str]) -> None:
        """Heal each checkout's `.swarmforge` view (stateview.ensure); log each heal."""
        for top in dict.fromkeys(checkouts):
            found = stateview.ensure(top)
            if found is not None:
                self.log.warning("the .swarmforge of %s was %s: made again", top, found)

    def catch_up(self, roles: Mapping[str, roletable.RoleEntry]) -> None:
        """Keep a copy of every queued or in-process handoff that has none (delivered by a
        daemon killed before it kept one, or by an older version)."""
        for role, entry in roles.items():
            box = Mailbox(entry.path)
            directory = kept_dir(self.root, role)
            for path in [*box.items(Box.NEW), *box.received(Box.IN_PROCESS)]:
                name = Path(path).name
                if os.path.lexists(directory / name):
                    continue
                try:
                    keep(self.root, role, name, fsutil.read_regular(path))
                except OSError:
                    continue

    def _look(self, role: str, worktree: str) -> None:
        directory = kept_dir(self.root, role)
        try:
            names = [p.name for p in directory.iterdir() if not p.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return
        if not names or not Path(worktree).is_dir():
            return  # a worktree that is gone: its mail is held until `up` makes it again
        box = Mailbox(worktree)
        # Most are queued or in process: listings tell them, not a look per handoff.
        listed = dict.fromkeys(_names(box.path(Box.NEW)), Box.NEW)
        for held in [box.path(Box.IN_PROCESS), *box.batches(Box.IN_PROCESS)]:
            listed |= dict.fromkeys(_names(held), Box.IN_PROCESS)
        for name in sorted(names):
            key = (role, name)
            found = listed.get(name) or where(box, name)
            if found is None:
                found = where(box, name)  # a move in the other direction (repair) meanwhile
            if found in DONE:
                (directory / name).unlink(missing_ok=True)
                self.seen.pop(key, None)
                self.missing.discard(key)
            elif found is not None:
                self.seen[key] = found
                self.missing.discard(key)
            elif key not in self.missing:
                self.missing.add(key)  # put back if still nowhere on the next pass
            else:
                self.missing.discard(key)
                self._put_back(role, box, name, str(directory / name))

    def _put_back(self, role: str, box: Mailbox, name: str, kept: str) -> None:
        key = (role, name)
        try:
            copy = message.read(kept)
        except (OSError, CorruptFile) as exc:
            if self.failing.get(key) != str(exc):
                self.log.error("cannot put back %s for %s: %s", name, role, exc)
                self.failing[key] = str(exc)
            return
        into = Box.NEW
        if self.seen.get(key) == Box.IN_PROCESS and not _holds_work(box):
            into = Box.IN_PROCESS
        try:
            made = inbox.queue_copy(box, name, copy, into=into)
        except (OSError, UnsafeMailbox) as exc:
            if self.failing.get(key) != str(exc):
                self.log.error("cannot put back %s for %s: %s", name, role, exc)
                self.failing[key] = str(exc)
            return
        self.failing.pop(key, None)
        if not made:
            return  # a copy came back meanwhile: never two
        shown = "in process" if into == Box.IN_PROCESS else "queued"
        self.log.warning("%s for %s had vanished from its mailbox: put back, %s", name, role, shown)
        self.events.emit("handoff-reoffered", {"name": name, "to": role, "into": into})
        self.wake(role)


def _holds_work(box: Mailbox) -> bool:
    return bool(box.items(Box.IN_PROCESS) or box.batches(Box.IN_PROCESS))


def _names(directory: str) -> list[str]:
    """The names in `directory`, as they are (a name found is looked at no further)."""
    try:
        return [entry.name for entry in os.scandir(directory)]
    except (FileNotFoundError, NotADirectoryError):
        return []
