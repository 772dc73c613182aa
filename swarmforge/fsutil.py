"""Atomic file writes, no-replace moves and safe opens: every file swarmforge writes goes here.

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


# What temp_name adds to a name: "." + "." + pid (at most 7 digits) + "." + 8 hex digits + ".tmp".
TEMP_NAME_EXTRA = 22


def temp_name(path: str) -> str:
    """A unique hidden name beside `path`, never mistaken for a queue item."""
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


def temp_owner(name: str) -> int | None:
    """The pid of the process that made temporary file `name` (see temp_name), or None."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    parts = name.split(".")
    # ["", <tail parts>..., <pid>, <random>, "tmp"]
    if len(parts) < 5 or not parts[-3].isdigit() or not parts[-3].isascii():
        return None
    if len(parts[-2]) != 8 or any(c not in "0123456789abcdef" for c in parts[-2]):
        return None
    return int(parts[-3])


def write_new(path: str, data: bytes, *, durable: bool = True, mode: int = FILE_MODE) -> None:
    """Write `data` to `path`, which must not exist yet, and flush it to disk.

    If writing fails (a full disk), the file made here is removed again.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    except BaseException as exc:
        os.close(fd)
        _unlink_quietly(path)
        if isinstance(exc, OSError) and exc.filename is None:
            # os.write and os.fsync name no file: a full disk must still say which one.
            raise OSError(exc.errno, exc.strerror, path) from None
        raise
    os.close(fd)


def atomic_write(path: str, data: bytes, *, durable: bool = True, mode: int = FILE_MODE) -> None:
    """Replace `path` by `data` so that readers see the old or the new file, never a mix."""
    tmp = temp_name(path)
    try:
        write_new(tmp, data, durable=durable, mode=mode)
        os.replace(tmp, path)
    except BaseException as exc:
        _unlink_quietly(tmp)
        if isinstance(exc, OSError) and exc.filename == tmp:
            raise OSError(exc.errno, exc.strerror, path) from None  # the name the caller knows
        raise
    if durable:
        fsync_dir(os.path.dirname(path) or ".")


def publish(tmp: str, path: str) -> bool:
    """Move finished file `tmp` to `path` unless `path` exists; False if it did."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        # Whether or not the link was made, the temporary name has served.
        _unlink_quietly(tmp)
    return True


def move_noreplace(src: str, dst: str) -> None:
    """Rename `src` to `dst`, never over an existing `dst` (FileExistsError)."""
    if os.path.lexists(dst):
        raise FileExistsError(dst)
    # rename(2) of a file never replaces a directory and the check above covers
    # the rest; the window between the two is only open to another claimer of
    # the same source, whose rename then fails with FileNotFoundError.
    os.rename(src, dst)


def _unlink_quietly(path: str) -> None:
    # try/except rather than contextlib.suppress: contextlib is not loaded on the hot path.
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
