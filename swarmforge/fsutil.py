"""Atomic file writes and no-replace moves: every file swarmforge writes goes through here."""

from __future__ import annotations

import os


def fsync_dir(path: str) -> None:
    """Make the entries of directory `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_name(path: str) -> str:
    """A unique hidden name beside `path`, never mistaken for a queue item."""
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


def write_new(path: str, data: bytes, *, durable: bool = True, mode: int = 0o644) -> None:
    """Write `data` to `path`, which must not exist yet, and flush it to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, *, durable: bool = True, mode: int = 0o644) -> None:
    """Replace `path` by `data` so that readers see the old or the new file, never a mix."""
    tmp = temp_name(path)
    try:
        write_new(tmp, data, durable=durable, mode=mode)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
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
