"""Watches on a changing set of directories: a wake-up whenever a file arrives in one.

On Linux through watchdog's inotify layer, InotifyFD: watchdog's Observer holds
every inotify event for up to half a second behind an unpaired IN_MOVED_FROM (it
waits for the matching IN_MOVED_TO) - and the daemon makes exactly such an event
each time it archives an original. InotifyFD calls back at once. Elsewhere
(inotify_c cannot even be imported there) through a watchdog observer
(`host.observer`): FSEvents on macOS, kqueue on the BSDs, or one that polls.
Watches are not recursive, so nothing in `outbox/tmp/` is ever seen. Every event
that may mean an arrival sets one doorbell; the daemon decides what to do by looking
at the files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)

from swarmforge import fsutil, host
from swarmforge.layout import STATE_DIR

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver, ObservedWatch
    from watchdog.observers.inotify_c import InotifyEvent, WatchDescriptor

STOP_TIMEOUT = 5.0


class Settable(Protocol):
    """Anything with a `set()` safe to call from another thread."""

    def set(self) -> None: ...


def wakes(event: FileSystemEvent) -> bool:
    """True if an observer's `event` may mean a file arrived (the inotify mask's events).

    A file deleted or modified, or a directory modified (it comes with the event of
    the entry that changed), is the daemon's own archiving and claiming, or its log.
    """
    if event.event_type == EVENT_TYPE_DELETED:
        return event.is_directory  # a watched directory went away
    return event.event_type in (EVENT_TYPE_CREATED, EVENT_TYPE_MOVED, EVENT_TYPE_CLOSED)


class _Poke:
    """InotifyFD's callbacks: every one sets the doorbell."""

    def __init__(self, changed: Settable) -> None:
        self.changed = changed

    def on_event(self, event: InotifyEvent) -> None:
        self.changed.set()

    def on_watch_deleted(self, wd: WatchDescriptor) -> None:
        self.changed.set()

    def on_queue_overflow(self) -> None:
        self.changed.set()  # events were lost: a full rescan covers them

    def on_events_lost(self) -> None:
        pass  # watchdog 7.1 asks for it after on_queue_overflow, which did the work


class _Inotify:
    """Watches through watchdog's InotifyFD (Linux)."""

    def __init__(self, changed: Settable) -> None:
        # Imported here: the module raises on import where libc has no inotify.
        from watchdog.observers.inotify_c import CallbackId, InotifyConstants, InotifyFD, Mask

        # A file appeared (renamed in, or created and written) or a watched directory went away.
        self.mask = Mask(
            InotifyConstants.IN_MOVED_TO
            | InotifyConstants.IN_CLOSE_WRITE
            | InotifyConstants.IN_CREATE
            | InotifyConstants.IN_DELETE_SELF
            | InotifyConstants.IN_MOVE_SELF
            | InotifyConstants.IN_ONLYDIR
        )
        self.callback = CallbackId(1)
        self.poke = _Poke(changed)
        self.inotify = InotifyFD()
        self.inotify.daemon = True
        self.watches: dict[str, WatchDescriptor] = {}

    def start(self) -> None:
        self.inotify.start()

    def add(self, directory: str) -> None:
        self.watches[directory] = self.inotify.add_callback(
            os.fsencode(directory), self.mask, self.poke, self.callback
        )

    def remove(self, directory: str) -> None:
        self.inotify.remove_callbacks([(self.watches.pop(directory), self.callback)])

    def stop(self) -> None:
        self.inotify.stop()
        self.inotify.join(timeout=STOP_TIMEOUT)


class _Handler(FileSystemEventHandler):
    def __init__(self, changed: Settable) -> None:
        self.changed = changed

    def dispatch(self, event: FileSystemEvent) -> None:
        if wakes(event):
            self.changed.set()


class _Observed:
    """Watches through a watchdog observer (FSEvents, kqueue, polling, ...)."""

    def __init__(self, changed: Settable, observer: BaseObserver) -> None:
        self.observer = observer
        self.observer.daemon = True
        self.handler = _Handler(changed)
        self.watches: dict[str, ObservedWatch] = {}

    def start(self) -> None:
        self.observer.start()

    def add(self, directory: str) -> None:
        # Returns once the watch is in place (a polling observer has its first snapshot).
        self.watches[directory] = self.observer.schedule(self.handler, directory)

    def remove(self, directory: str) -> None:
        self.observer.unschedule(self.watches.pop(directory))

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=STOP_TIMEOUT)


class Arrivals:
    """Watches exactly the directories last given to `watch`.

    Through InotifyFD where the system has inotify (`inotify`), else through
    `host.observer(native=native)`; the tests take every way on Linux.
    """

    def __init__(
        self, changed: Settable, *, inotify: bool = host.HAS_INOTIFY, native: bool = True
    ) -> None:
        self.way: _Inotify | _Observed = (
            _Inotify(changed) if inotify else _Observed(changed, host.observer(native=native))
        )
        self.watched: set[str] = set()

    def start(self) -> None:
        """Start the thread that reads the events."""
        self.way.start()

    def watch(self, directories: list[str]) -> None:
        """Watch these directories (created if missing) and stop watching any other.

        A mailbox directory whose worktree is gone is neither made nor watched: making
        it would make the worktree again as a plain directory (`up` makes it again).
        """
        wanted = set(directories)
        for directory in sorted(self.watched - wanted):
            self.way.remove(directory)
            self.watched.discard(directory)
        for directory in sorted(wanted - self.watched):
            top, state, _ = directory.partition(f"{os.sep}{STATE_DIR}{os.sep}")
            if state and not Path(top).is_dir():
                continue
            fsutil.makedirs(directory)
            self.way.add(directory)
            self.watched.add(directory)

    def stop(self) -> None:
        """Stop watching and release what the watches hold."""
        self.way.stop()
