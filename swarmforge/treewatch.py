"""Watches on whole directory trees: a call whenever anything under one of them changes.

A change is a file closed after writing, or a file or directory created, deleted or
renamed; opening or reading one is none, so whoever reads the trees never wakes
itself. `skip` names what does not count: a directory it names is never entered (a git
directory, logs written all the time), a file it names changes nothing (lock files,
the temporaries of atomic writes). A tree that does not exist is waited for: its
nearest existing ancestor is watched, not recursively, until it appears; a tree that
goes away is waited for again. Both count as changes.

On Linux through watchdog's InotifyFD (see daemon/arrivals.py for why not its Observer)
with one watch per directory, added as directories appear (treeways.py). Elsewhere
through a watchdog observer (`host.observer`) that watches each tree recursively as the
system does it; what it reports under a skipped directory is dropped there.

When the system refuses a watch (the inotify limit), `complete` turns False: silence
then proves nothing, and the caller reads again on a timer.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge import host

if TYPE_CHECKING:
    from swarmforge.treeways import Way

Changed = Callable[[str], None]  # called with the path that changed, from the watch's thread
Skip = Callable[[str], bool]


def _never(path: str) -> bool:
    return False


def _nearest(path: str) -> str:
    """The nearest existing ancestor of `path` (absolute), which does not exist."""
    ancestor = Path(path).parent
    while ancestor != ancestor.parent and not ancestor.is_dir():
        ancestor = ancestor.parent
    return str(ancestor)


def within(path: str, tree: str) -> bool:
    """True if `path` is `tree` or lies under it."""
    return path == tree or path.startswith(tree.rstrip(os.sep) + os.sep)


class TreeWatch:
    """Watches exactly the trees last given to `watch`, and calls `changed` on a change.

    Through InotifyFD where the system has inotify (`inotify`), else through
    `host.observer(native=native)`; the tests take every way on Linux.
    """

    def __init__(
        self,
        changed: Changed,
        skip: Skip = _never,
        *,
        inotify: bool = host.HAS_INOTIFY,
        native: bool = True,
    ) -> None:
        from swarmforge import treeways

        self.changed = changed
        self.skip = skip
        self.lock = threading.RLock()  # the ways call back from their own thread
        self.trees: tuple[str, ...] = ()
        self.armed: set[str] = set()  # trees watched
        self.waiting: set[str] = set()  # trees that do not exist: an ancestor watched
        self.stale = False  # events were lost: the next `watch` starts over
        self.way: Way = (
            treeways.Inotify(self) if inotify else treeways.Observed(self, native=native)
        )

    @property
    def complete(self) -> bool:
        """False once the system refused a watch: some change may go unseen."""
        return not self.way.refused

    def start(self) -> None:
        """Start the thread that reads the events."""
        self.way.start()

    def watch(self, trees: Iterable[str]) -> bool:
        """Watch exactly these trees (absolute paths); True if what is watched changed."""
        wanted = tuple(sorted({os.path.normpath(t) for t in trees}))
        with self.lock:
            if wanted == self.trees and not self.stale:
                return False
            self.way.clear()
            self.trees, self.stale = wanted, False
            self.armed.clear()
            self.waiting.clear()
            for tree in wanted:
                self._arm(tree)
            return True

    def stop(self) -> None:
        """Stop watching and release what the watches hold."""
        self.way.stop()

    def _arm(self, tree: str) -> bool:
        """Watch `tree`, or wait for it through its nearest existing ancestor."""
        while True:
            if Path(tree).is_dir() and self.way.add(tree, recursive=True):
                self.armed.add(tree)
                self.waiting.discard(tree)
                return True
            self.waiting.add(tree)
            ancestor = _nearest(tree)
            self.way.add(ancestor, recursive=False)
            # The next directory down may have come before the watch: then look again.
            if _nearest(tree) == ancestor or self.way.refused:
                return False

    def counts(self, path: str) -> bool:
        """True if a change at `path` is one to report: in a tree, and nothing on the way
        down to it skipped (trees may nest: a tree may skip where another begins)."""
        return any(within(path, tree) and not self._skipped(path, tree) for tree in self.armed)

    def _skipped(self, path: str, tree: str) -> bool:
        here, top = Path(path), Path(tree)
        while here != top:
            if self.skip(str(here)):
                return True
            here = here.parent
        return False

    def noticed(self, path: str) -> None:
        """A way saw a change at `path`."""
        with self.lock:
            appeared = [tree for tree in sorted(self.waiting) if self._arm(tree)]
            inside = self.counts(path)
        for tree in appeared:
            self.changed(tree)
        if inside:
            self.changed(path)

    def lost(self, directory: str) -> None:
        """A watched directory went away: a tree that did is waited for again."""
        with self.lock:
            gone = directory in self.armed
            if gone:
                self.armed.discard(directory)
                self.way.forget(directory)
                self._arm(directory)
        if gone:
            self.changed(directory)

    def overflowed(self) -> None:
        """Events were lost: the next `watch` starts over, and a read now sees the rest."""
        with self.lock:
            self.stale = True
        self.changed("")
