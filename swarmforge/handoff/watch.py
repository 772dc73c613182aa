"""inotify watches on a changing set of directories, through watchdog's inotify layer.

watchdog's Observer holds every event for up to half a second behind an
unpaired IN_MOVED_FROM (it waits for the matching IN_MOVED_TO) - and the daemon
makes exactly such an event each time it archives an original. Its lower layer,
InotifyFD, calls back at once, so that is what is used here. Watches are not
recursive, so nothing in `outbox/tmp/` is ever seen. Every event sets one
waker; the daemon decides what to do by looking at the files.
"""

from __future__ import annotations

import os
from typing import Protocol

from watchdog.observers.inotify_c import (
    CallbackId,
    InotifyConstants,
    InotifyEvent,
    InotifyFD,
    Mask,
    WatchDescriptor,
)

from swarmforge import fsutil

# A file appeared (renamed in, or created and written) or a watched directory went away.
MASK = Mask(
    InotifyConstants.IN_MOVED_TO
    | InotifyConstants.IN_CLOSE_WRITE
    | InotifyConstants.IN_CREATE
    | InotifyConstants.IN_DELETE_SELF
    | InotifyConstants.IN_MOVE_SELF
    | InotifyConstants.IN_ONLYDIR
)
CALLBACK = CallbackId(1)


class Settable(Protocol):
    """Anything with a `set()` safe to call from another thread."""

    def set(self) -> None: ...


class _Poke:
    def __init__(self, changed: Settable) -> None:
        self.changed = changed

    def on_event(self, event: InotifyEvent) -> None:
        self.changed.set()

    def on_watch_deleted(self, wd: WatchDescriptor) -> None:
        self.changed.set()

    def on_queue_overflow(self) -> None:
        self.changed.set()  # events were lost: a full rescan covers them


class Watcher:
    """Watches exactly the directories last given to `watch`."""

    def __init__(self, changed: Settable) -> None:
        self.poke = _Poke(changed)
        self.inotify = InotifyFD()
        self.inotify.daemon = True
        self.watches: dict[str, WatchDescriptor] = {}

    def start(self) -> None:
        """Start the thread that reads inotify events."""
        self.inotify.start()

    def watch(self, directories: list[str]) -> None:
        """Watch these directories (created if missing) and stop watching any other."""
        wanted = set(directories)
        gone = [(self.watches.pop(d), CALLBACK) for d in set(self.watches) - wanted]
        if gone:
            self.inotify.remove_callbacks(gone)
        for directory in sorted(wanted - set(self.watches)):
            fsutil.makedirs(directory)
            self.watches[directory] = self.inotify.add_callback(
                os.fsencode(directory), MASK, self.poke, CALLBACK
            )

    def stop(self) -> None:
        """Stop watching and release the inotify descriptor."""
        self.inotify.stop()
        self.inotify.join(timeout=5)
