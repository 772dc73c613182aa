"""The two ways treewatch.py watches directories: InotifyFD on Linux, an observer elsewhere.

Each reports to its owner (a TreeWatch) what changed, which watched directory went
away, and when events were lost; the owner decides what counts.
"""

from __future__ import annotations

import errno
import os
import queue
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

from swarmforge import host

if TYPE_CHECKING:
    from watchdog.observers.api import ObservedWatch
    from watchdog.observers.inotify_c import InotifyEvent, WatchDescriptor

STOP_TIMEOUT = 5.0
REFUSED = (errno.ENOSPC, errno.EMFILE, errno.ENOMEM)  # the system's limits, not a missing path
# What an observer reports that may be a change: never an open or a read. A polling
# observer reports a written file as modified, the others as closed (or modified). A
# directory "modified" comes with the event of the entry that changed, which says more.
CHANGES: list[type[FileSystemEvent]] = [
    *(FileCreatedEvent, DirCreatedEvent, FileDeletedEvent, DirDeletedEvent),
    *(FileMovedEvent, DirMovedEvent, FileClosedEvent, FileModifiedEvent),
]


class Owner(Protocol):
    """What a way reports to (treewatch.TreeWatch)."""

    lock: threading.RLock

    def skip(self, path: str) -> bool: ...
    def counts(self, path: str) -> bool: ...
    def noticed(self, path: str) -> None: ...
    def lost(self, directory: str) -> None: ...
    def overflowed(self) -> None: ...


class Way(Protocol):
    """A way of watching directories, each alone or with everything under it."""

    refused: bool  # the system refused a watch

    def start(self) -> None: ...
    def add(self, directory: str, recursive: bool) -> bool: ...
    def forget(self, directory: str) -> None: ...
    def clear(self) -> None: ...
    def stop(self) -> None: ...


class Inotify:
    """One InotifyFD watch per directory, added as directories appear (Linux)."""

    def __init__(self, owner: Owner) -> None:
        # Imported here: the module raises on import where libc has no inotify.
        from watchdog.observers.inotify_c import CallbackId, InotifyConstants, InotifyFD, Mask

        c = InotifyConstants
        self.mask = Mask(
            c.IN_CLOSE_WRITE
            | c.IN_CREATE
            | c.IN_DELETE
            | c.IN_MOVED_FROM
            | c.IN_MOVED_TO
            | c.IN_DELETE_SELF
            | c.IN_MOVE_SELF
            | c.IN_ONLYDIR
        )
        self.owner = owner
        self.callback = CallbackId(1)
        self.inotify = InotifyFD()
        self.inotify.daemon = True
        self.paths: dict[WatchDescriptor, str] = {}
        self.wds: dict[str, WatchDescriptor] = {}
        self.refused = False

    def start(self) -> None:
        self.inotify.start()

    def add(self, directory: str, recursive: bool, found: list[str] | None = None) -> bool:
        """Watch `directory` and, with `recursive`, every directory under it not skipped;
        every entry the walk meets goes into `found`."""
        if not self._one(directory):
            return False
        todo = [directory] if recursive else []
        while todo:
            try:
                entries = list(os.scandir(todo.pop()))
            except OSError:
                continue  # gone meanwhile: its parent's event says so
            if found is not None:
                found.extend(entry.path for entry in entries)
            todo.extend(
                entry.path
                for entry in entries
                if entry.is_dir(follow_symlinks=False)
                and not self.owner.skip(entry.path)
                and self._one(entry.path)
            )
        return True

    def _one(self, directory: str) -> bool:
        if directory in self.wds:
            return True
        if self.refused:
            return False
        try:
            wd = self.inotify.add_callback(os.fsencode(directory), self.mask, self, self.callback)
        except OSError as exc:
            self.refused = self.refused or exc.errno in REFUSED
            return False
        if wd < 0:  # watchdog lets a directory it may not read through as -1
            self.inotify.remove_callbacks([(wd, self.callback)])
            return False
        self.paths[wd] = directory
        self.wds[directory] = wd
        return True

    def forget(self, directory: str) -> None:
        """Stop watching `directory` and every directory under it."""
        prefix = directory.rstrip(os.sep) + os.sep
        gone = [d for d in self.wds if d == directory or d.startswith(prefix)]
        self.inotify.remove_callbacks([(self.wds[d], self.callback) for d in gone])
        for d in gone:
            self.paths.pop(self.wds.pop(d), None)

    def clear(self) -> None:
        self.inotify.remove_callbacks([(wd, self.callback) for wd in self.paths])
        self.paths.clear()
        self.wds.clear()
        self.refused = False

    def stop(self) -> None:
        self.inotify.stop()
        self.inotify.join(timeout=STOP_TIMEOUT)

    # InotifyFD's callbacks, from its thread.

    def on_event(self, event: InotifyEvent) -> None:
        found: list[str] = []
        with self.owner.lock:
            base = self.paths.get(event.wd)
            if base is None:
                return  # a watch forgotten while its events were on the way
            if event.is_delete_self or event.is_move_self:
                path = base
            else:
                path = str(Path(base, os.fsdecode(event.name)))
                if event.is_directory and event.is_moved_from:
                    self.forget(path)  # its watches follow it: found again where it lands
                elif event.is_directory and self.owner.counts(path):
                    # Created or moved in: watched from now on. What came into it before
                    # its watch did made no event: reported as the walk finds it.
                    self.add(path, recursive=True, found=found)
        if event.is_delete_self or event.is_move_self:
            self.owner.lost(path)
        else:
            self.owner.noticed(path)
            for entry in found:
                self.owner.noticed(entry)

    def on_watch_deleted(self, wd: WatchDescriptor) -> None:
        with self.owner.lock:
            path = self.paths.pop(wd, None)
            if path is not None and self.wds.get(path) == wd:
                del self.wds[path]

    def on_queue_overflow(self) -> None:
        self.owner.overflowed()

    def on_events_lost(self) -> None:
        pass  # watchdog 7.1 asks for it after on_queue_overflow, which did the work


class _Handler(FileSystemEventHandler):
    def __init__(self, events: queue.SimpleQueue[FileSystemEvent | None]) -> None:
        self.events = events

    def dispatch(self, event: FileSystemEvent) -> None:
        self.events.put(event)


class Observed:
    """Each tree watched recursively by a watchdog observer (FSEvents, kqueue, polling, ...).

    Its events reach the owner through a thread of this way's own: the observer holds
    its lock while it dispatches, and the owner's lock is taken before the observer's
    when the trees change.
    """

    def __init__(self, owner: Owner, native: bool = True) -> None:
        self.owner = owner
        self.observer = host.observer(native=native)
        self.observer.daemon = True
        self.events: queue.SimpleQueue[FileSystemEvent | None] = queue.SimpleQueue()
        self.handler = _Handler(self.events)
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.watches: dict[tuple[str, bool], ObservedWatch] = {}
        self.refused = False

    def start(self) -> None:
        self.observer.start()
        self.pump.start()

    def add(self, directory: str, recursive: bool) -> bool:
        if (directory, recursive) in self.watches:
            return True
        try:
            watch = self.observer.schedule(
                self.handler, directory, recursive=recursive, event_filter=CHANGES
            )
        except OSError as exc:
            self.refused = self.refused or exc.errno in REFUSED
            return False
        self.watches[directory, recursive] = watch
        return True

    def forget(self, directory: str) -> None:
        prefix = directory.rstrip(os.sep) + os.sep
        for key in [k for k in self.watches if k[0] == directory or k[0].startswith(prefix)]:
            self.observer.unschedule(self.watches.pop(key))

    def clear(self) -> None:
        self.observer.unschedule_all()
        self.watches.clear()
        self.refused = False

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=STOP_TIMEOUT)
        self.events.put(None)
        self.pump.join(timeout=STOP_TIMEOUT)

    def _pump(self) -> None:
        while (event := self.events.get()) is not None:
            src = os.fsdecode(event.src_path)
            if event.event_type == "deleted" and event.is_directory:
                self.owner.lost(src)  # a tree's own directory went away: waited for again
            self.owner.noticed(src)
            if event.dest_path:
                self.owner.noticed(os.fsdecode(event.dest_path))
