"""A role's mailbox directories, and every transition that moves a handoff file.

Where a file lies is its state. Nothing outside this module moves handoff files:
the gate, the daemon, the receive helpers and repair all call the transitions here.
"""

from __future__ import annotations

import os
import stat

from swarmforge import fsutil, text, times
from swarmforge.errors import Refused
from swarmforge.handoff import message
from swarmforge.layout import HANDOFFS

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


class Mailbox:
    """The mailbox of the worktree at `worktree` (`<worktree>/.swarmforge/handoffs`)."""

    __slots__ = ("root", "worktree")

    def __init__(self, worktree: str) -> None:
        self.worktree = os.path.abspath(worktree)
        self.root = os.path.join(self.worktree, HANDOFFS)

    def path(self, box: str, name: str = "") -> str:
        """The path of `name` in `box` (or of the box itself)."""
        return os.path.join(self.root, box, name) if name else os.path.join(self.root, box)

    def _chain(self, box: str) -> list[str]:
        """Every directory from `.swarmforge` down to `box` ("" for the mailbox root)."""
        chain = []
        here = self.worktree
        for part in [*HANDOFFS.split(os.sep), *(box.split(os.sep) if box else [])]:
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
        """Create the given boxes if missing; UnsafeMailbox if one is not a real directory."""
        self.check(*boxes)
        fsutil.makedirs(self.worktree)
        for box in boxes or ("",):
            for path in self._chain(box):
                try:
                    os.mkdir(path, fsutil.DIR_MODE)
                except FileExistsError:
                    fsutil.narrow_dir(path)
        # Looked at again: something may have been put in place between the check and mkdir.
        self.check(*boxes)

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

    def locate(self, name: str) -> tuple[str, str] | None:
        """(box, path) of the copy named `name` on the receiving side: queued, in process or
        completed, alone or in a batch; None if this mailbox never received it."""
        for box in (Box.COMPLETED, Box.IN_PROCESS, Box.NEW):
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

    # -- transitions ---------------------------------------------------------------------------

    def install(self, name: str, handoff: message.Handoff) -> str:
        """Gate: write `name` under outbox/tmp/ and rename it into outbox/; its final path."""
        self.ensure(Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED)
        # A temporary name carrying the writer's pid: the daemon sweeps it if the writer dies.
        tmp = fsutil.temp_name(self.path(Box.OUTBOX_TMP, name))
        final = self.path(Box.OUTBOX, name)
        try:
            fsutil.write_new(tmp, handoff.render())
            fsutil.move_noreplace(tmp, final)
        except BaseException:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise
        fsutil.fsync_dir(self.path(Box.OUTBOX))
        return final

    def deliver_copy(self, name: str, copy: message.Handoff) -> bool:
        """Daemon: publish `copy` as `name` in inbox/new/; False if one was there already."""
        self.check(Box.IN_PROCESS, Box.COMPLETED)
        return self.queue_copy(name, copy)

    def queue_copy(self, name: str, copy: message.Handoff) -> bool:
        """Publish `copy` as `name` in inbox/new/; False if one was there already.

        Written under a temporary name and linked in, so a reader never sees part of it.
        """
        self.ensure(Box.NEW)
        final = self.path(Box.NEW, name)
        tmp = fsutil.temp_name(final)
        fsutil.write_new(tmp, copy.render())
        made = fsutil.publish(tmp, final)
        fsutil.fsync_dir(self.path(Box.NEW))
        return made

    def take_back(self, path: str) -> bool:
        """Remove the queued copy at `path` unless someone took it first; True if removed.

        Renamed away before it is unlinked, so that of two takers only one removes it.
        """
        claim = fsutil.temp_name(path)
        try:
            os.rename(path, claim)
        except FileNotFoundError:
            return False
        os.unlink(claim)
        return True

    def archive(self, path: str) -> None:
        """Daemon: move the delivered original at `path` from outbox/ to sent/.

        Raises FileExistsError if a handoff of that name was sent already.
        """
        self.ensure(Box.SENT)
        sent = self.path(Box.SENT)
        move(path, os.path.join(sent, os.path.basename(path)))

    def set_aside(self, path: str, reason: str) -> str:
        """Move the handoff at `path` to failed/, beside a `<name>.error` saying why; its path.

        For a file that cannot be delivered or read: it keeps every byte, and no longer
        stands in the way of the files behind it.
        """
        self.ensure(Box.FAILED)
        failed = self.path(Box.FAILED)
        name = os.path.basename(path)
        target = os.path.join(failed, name)
        if os.path.lexists(target) or os.path.lexists(target + ".error"):
            target = os.path.join(failed, f"{name}.{times.stamp().replace(':', '')}")
        # The reason is written first: a crash before the move leaves the file to be
        # set aside again, never a failed file without its reason.
        fsutil.atomic_write(target + ".error", f"{reason}\n".encode())
        fsutil.move_noreplace(path, target)
        fsutil.fsync_dir(failed)
        return target


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


NAME_FORMAT = "<PP>_<YYYYMMDDTHHMMSSZ>_<NNNNNN>_from_<sender>_to_<r1>_<r2>....handoff"


def name_problem(name: str) -> str | None:
    """What keeps `name` from being a handoff file name the gate makes (NAME_FORMAT), or None."""
    parts = name[: -len(SUFFIX)].split("_") if name.endswith(SUFFIX) else []
    if len(parts) < 7 or parts[3] != "from" or parts[5] != "to":
        return "fields missing or misplaced"
    priority, stamp, seq = parts[:3]
    if not (len(priority) == 2 and _digits(priority)):
        return "no two-digit priority"
    if not (
        len(stamp) == 16
        and _digits(stamp[:8])
        and stamp[8] == "T"
        and _digits(stamp[9:15])
        and stamp[15] == "Z"
    ):
        return "no YYYYMMDDTHHMMSSZ timestamp"
    if not (len(seq) >= 6 and _digits(seq)):
        return "no six-digit sequence number"
    for role in (parts[4], *parts[6:]):
        if not role or "/" in role or not role.isprintable() or any(c.isspace() for c in role):
            return "an empty role name, or one with spaces or control characters"
    return None


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def accept(src: str, dst: str, handoff: message.Handoff) -> message.Handoff:
    """Take queued `src`, already parsed as `handoff`, by renaming it to `dst`, then stamp
    `dequeued_at`.

    Parsed first, so a corrupt file stays where it is (a queued file is never edited
    in place, so what was parsed is what is taken). Raises FileNotFoundError if
    another process took it first: claiming is the rename.
    """
    fsutil.move_noreplace(src, dst)
    return _restamp(dst, handoff, "dequeued_at")


def resume(path: str) -> message.Handoff:
    """The handoff in process at `path`, stamped `dequeued_at` if a crash left it unstamped."""
    handoff = message.read(path)
    if handoff.get("dequeued_at") is not None:
        return handoff
    return _restamp(path, handoff, "dequeued_at")


def complete(src: str, dst: str) -> None:
    """Stamp `completed_at` on the task at `src` and move it to `dst`."""
    _restamp(src, message.read(src), "completed_at")
    move(src, dst)


def complete_batch(src: str, dst: str, items: list[str]) -> None:
    """Stamp `completed_at` on every item of batch directory `src`, then move it to `dst`."""
    now = times.stamp()
    for item in items:
        _restamp(item, message.read(item), "completed_at", now)
    move(src, dst)


def annotate(path: str, headers: list[tuple[str, str]]) -> message.Handoff:
    """Add or replace headers of the handoff in process at `path` (e.g. a failed outcome)."""
    handoff = message.read(path)
    for field, value in headers:
        handoff = handoff.with_header(field, value)
    fsutil.atomic_write(path, handoff.render())
    return handoff


def _restamp(
    path: str, handoff: message.Handoff, field: str, value: str | None = None
) -> message.Handoff:
    # Published files are never edited in place: a new file is renamed over the old.
    updated = handoff.with_header(field, value or times.stamp())
    fsutil.atomic_write(path, updated.render())
    return updated


def move(src: str, dst: str) -> None:
    """Move a file or batch directory to `dst`, never over an existing one."""
    fsutil.move_noreplace(src, dst)
    fsutil.fsync_dir(os.path.dirname(dst))
