"""Safe opens of regular files, and the directories they lie in: every file swarmforge opens
goes through here; writing one whole is filewrite.py's.

Only regular files are ever opened, and never in a way that can block: a FIFO,
a device or a socket put where a state file belongs is refused, not waited on.
"""

from __future__ import annotations

import errno
import os
import stat

# Directories and files of the mailboxes and the daemon: never writable by group or others,
# whatever the umask (a narrower umask still narrows them further).
DIR_MODE = 0o755
FILE_MODE = 0o644
SHARED_WRITE = 0o022
# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
# O_NOCTTY: opening a terminal device must never make it the controlling terminal.
SAFE_OPEN = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFile(OSError):
    """A path that should hold a regular file holds something else (`kind` says what)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", path)
        self.kind = kind


class FileTooLarge(OSError):
    """A file is larger than the reader accepts."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes ({size} bytes)", path)
        self.size = size
        self.limit = limit


def kind_of(mode: int) -> str:
    """What a non-regular file of st_mode `mode` is, in words ("a FIFO")."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def open_regular(path: str, flags: int, mode: int = FILE_MODE, *, follow: bool = False) -> int:
    """A descriptor on the regular file at `path`; NotRegularFile if it is anything else.

    Never blocks and never follows a symbolic link in the last component unless `follow`.
    """
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        # Refused before opening: opening a device may have effects of its own.
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, kind_of(st.st_mode))
    try:
        fd = os.open(path, flags | SAFE_OPEN | (0 if follow else os.O_NOFOLLOW), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotRegularFile(path, "a symbolic link") from None
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing with no reader
            raise NotRegularFile(path, kind_of(os.stat(path).st_mode)) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(path, kind_of(st.st_mode))
    return fd


def read_regular(path: str, *, limit: int | None = None, follow: bool = False) -> bytes:
    """The contents of the regular file at `path`, refusing more than `limit` bytes.

    The size is checked before reading, and the read stops after `limit` + 1 bytes
    in case the file grows meanwhile.
    """
    fd = open_regular(path, os.O_RDONLY, follow=follow)
    try:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise FileTooLarge(path, size, limit)
        chunks = []
        want = -1 if limit is None else limit + 1
        while want:
            chunk = os.read(fd, max(size + 1, 65536) if want < 0 else want)
            if not chunk:
                break
            chunks.append(chunk)
            if want > 0:
                want -= len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise FileTooLarge(path, len(data), limit)
    return data


def read_end(path: str, count: int, begin: int = 0) -> tuple[int, bytes]:
    """The last `count` bytes of the regular file at `path` (none before offset `begin`),
    and the offset they start at: the end of a log, however long it has grown."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        start = max(begin, os.fstat(fd).st_size - count, 0)
        chunks = []
        want = count
        while want > 0:
            chunk = os.pread(fd, want, start + count - want)
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
    finally:
        os.close(fd)
    return start, b"".join(chunks)


def open_append(path: str, mode: int = FILE_MODE) -> int:
    """A descriptor appending to the regular file at `path` (created if missing).

    A file left writable by group or others (made under a permissive umask) is narrowed.
    """
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    current = stat.S_IMODE(os.fstat(fd).st_mode)
    if current & SHARED_WRITE:
        os.fchmod(fd, current & ~SHARED_WRITE)
    return fd


def makedirs(path: str, mode: int = DIR_MODE) -> None:
    """Create directory `path` and any missing parents, each with `mode` (and the umask).

    Unlike os.makedirs, the parents also get `mode`, not 0o777 less the umask.
    """
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    if parent and parent != path:
        makedirs(parent, mode)
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def narrow_dir(path: str) -> None:
    """Take group and others' write permission off directory `path`, if this user owns it.

    For state directories made under a permissive umask by an older version: they are
    narrowed as they are used. A symbolic link is never followed.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not (stat.S_ISDIR(st.st_mode) and st.st_mode & SHARED_WRITE):
        return
    if st.st_uid != os.geteuid():
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~SHARED_WRITE)
    finally:
        os.close(fd)


def fsync_dir(path: str) -> None:
    """Make the entries of directory `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
