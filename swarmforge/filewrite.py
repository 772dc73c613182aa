"""Writing files so that no reader sees half of one: atomic replaces, new files written whole,
no-replace moves, and the temporary names they go through.
"""

from __future__ import annotations

import os

from swarmforge.fsutil import FILE_MODE, fsync_dir

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
