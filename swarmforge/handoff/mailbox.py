"""A role's mailbox directories: where each lies, that each is a real one, what each holds.

Where a file lies is its state. The transitions that move handoff files are in
outbox.py (install, archive, set aside), inbox.py (publish a copy, take it back) and
inprocess.py (accept, resume, complete); nothing else moves them.
"""

from __future__ import annotations

import os
import stat

from swarmforge import filewrite, fsutil, statedir, stateview, text
from swarmforge.errors import Refused
from swarmforge.layout import HANDOFFS_NAME, STATE_DIR

SUFFIX = ".handoff"
BATCH_PREFIX = "batch_"


class Box:
    """The mailbox directories, relative to the mailbox root.

    A constants class rather than enum.Enum: importing enum costs the helpers
    milliseconds they do not have.
    """

    OUTBOX_TMP = os.path.join("outbox", "tmp")
    OUTBOX = "outbox"
    SENT = "sent"
    FAILED = "failed"
    NEW = os.path.join("inbox", "new")
    IN_PROCESS = os.path.join("inbox", "in_process")
    COMPLETED = os.path.join("inbox", "completed")


# The boxes a received copy moves through, in that order.
FLOW = (Box.NEW, Box.IN_PROCESS, Box.COMPLETED)


class UnsafeMailbox(Refused):
    """A mailbox directory that is a symbolic link or no directory at all: never used.

    `.swarmforge/` is only git-ignored, so a commit can put anything there; a mailbox
    directory replaced that way must not be written through, nor read as a queue.
    """

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(
            f"UNSAFE_MAILBOX: {text.shown(path)} is {kind}, not a real directory; "
            "the mailbox is not used until it is one.",
            hint="Remove it (and any commit that put it there: .swarmforge/ is never "
            "committed), then run again.",
        )
        self.path = path
        self.kind = kind


class WorktreeGone(UnsafeMailbox):
    """The worktree a mailbox belongs to is gone: its mail is held, and the worktree is never
    made again as a plain directory by writing mail into it (`up` makes it again)."""

    def __init__(self, path: str) -> None:
        Refused.__init__(
            self,
            f"WORKTREE_GONE: {text.shown(path)} does not exist; its mail is held until "
            "`swarmforge up` makes the worktree again.",
        )


class Mailbox:
    """The mailbox of the worktree at `worktree` (`<worktree>/.swarmforge/handoffs`)."""

    __slots__ = ("root", "state", "worktree")

    def __init__(self, worktree: str) -> None:
        self.worktree = os.path.abspath(worktree)
        self.state = statedir.of(self.worktree)  # where the mailbox lies: statedir.py
        self.root = os.path.join(self.state, HANDOFFS_NAME)

    def path(self, box: str, name: str = "") -> str:
        """The path of `name` in `box` (or of the box itself)."""
        return os.path.join(self.root, box, name) if name else os.path.join(self.root, box)

    def _chain(self, box: str) -> list[str]:
        """Every directory from the checkout's state directory down to `box` ("" for the
        mailbox root)."""
        chain = [self.state, self.root]
        here = self.root
        for part in box.split(os.sep) if box else []:
            here = os.path.join(here, part)
            chain.append(here)
        return chain

    def problem(self, *boxes: str) -> UnsafeMailbox | None:
        """Why `boxes` (and the directories above them) cannot be used, or None.

        Each is looked at without following symbolic links; a missing one is no problem
        (ensure makes it), and nothing below a missing one can exist.
        """
        for box in boxes or ("",):
            for path in self._chain(box):
                try:
                    st = os.lstat(path)
                except FileNotFoundError:
                    break
                if stat.S_ISREG(st.st_mode):
                    return UnsafeMailbox(path, "a regular file")
                if not stat.S_ISDIR(st.st_mode):
                    return UnsafeMailbox(path, fsutil.kind_of(st.st_mode))
        return None

    def check(self, *boxes: str) -> None:
        """Raise UnsafeMailbox if any of `boxes`, or a directory above them, is not a real one."""
        problem = self.problem(*boxes)
        if problem is not None:
            raise problem

    def ensure(self, *boxes: str) -> None:
        """Create the given boxes if missing; UnsafeMailbox if one is not a real directory,
        WorktreeGone if the worktree itself is (never made again here as a plain one)."""
        self.check(*boxes)
        if not os.path.isdir(self.worktree):
            raise WorktreeGone(self.worktree)
        if self.state != os.path.join(self.worktree, STATE_DIR):
            fsutil.makedirs(os.path.dirname(self.state))  # out of the checkout: statedir.py
        for box in boxes or ("",):
            for path in self._chain(box):
                try:
                    os.mkdir(path, fsutil.DIR_MODE)
                except FileExistsError:
                    fsutil.narrow_dir(path)
        # Looked at again: something may have been put in place between the check and mkdir.
        self.check(*boxes)
        stateview.ensure(self.worktree)  # the checkout's view of it, for agents and people

    def items(self, box: str) -> list[str]:
        """Absolute paths of the queue items in `box`, in file-name order."""
        return items_in(self.path(box))

    def batches(self, box: str = Box.IN_PROCESS) -> list[str]:
        """Absolute paths of the batch directories in `box` (in process), in name order."""
        try:
            entries = list(os.scandir(self.path(box)))
        except FileNotFoundError:
            return []
        return sorted(
            e.path
            for e in entries
            if e.name.startswith(BATCH_PREFIX)
            and not text.has_control(e.name)  # see items_in
            and e.is_dir(follow_symlinks=False)
        )

    def locate(
        self, name: str, order: tuple[str, ...] = (Box.COMPLETED, Box.IN_PROCESS, Box.NEW)
    ) -> tuple[str, str] | None:
        """(box, path) of the copy named `name` on the receiving side: queued, in process or
        completed, alone or in a batch; None if this mailbox never received it. Where two
        are, the first in `order` (`FLOW` finds one that moves on meanwhile all the same).
        """
        for box in order:
            path = self.path(box, name)
            if os.path.lexists(path):
                return box, path
            if box == Box.NEW:
                continue
            for batch in self.batches(box):
                path = os.path.join(batch, name)
                if os.path.lexists(path):
                    return box, path
        return None

    def received(self, box: str) -> list[str]:
        """Every handoff in `box`, alone or in a batch directory, in name order."""
        found = self.items(box)
        for batch in self.batches(box):
            found += items_in(batch)
        return sorted(found)


def items_in(directory: str) -> list[str]:
    """Absolute paths of the regular `.handoff` files in `directory`, in name order.

    A name holding a control character is no item: printed, it could start a line of its own.
    """
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    return sorted(
        e.path
        for e in entries
        if e.name.endswith(SUFFIX)
        and not e.name.startswith(".")
        and not text.has_control(e.name)
        and e.is_file(follow_symlinks=False)
    )


def move(src: str, dst: str) -> None:
    """Move a file or batch directory to `dst`, never over an existing one."""
    filewrite.move_noreplace(src, dst)
    fsutil.fsync_dir(os.path.dirname(dst))
