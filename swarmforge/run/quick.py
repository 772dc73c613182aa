"""System calls quick enough to make while holding the interpreter lock.

`os.close`, `os.pipe2` and `select.epoll.register` release the interpreter lock
around their system call, and take it back after. When another thread is
waiting for the lock, each release hands it over, and the caller then waits to
get it back: two thread switches for a call that takes a microsecond or two. The
spawner's threads make six such calls per command, on two cores where the
orchestrator's thread wants the lock too; made through libc here, without a
release, they cost just the call.

Linux only (epoll); elsewhere, and where libc cannot be loaded, the `os` and
`select` functions do the same job.
"""

from __future__ import annotations

import ctypes
import os
import platform
import select
import sys

_EPOLL_CTL_ADD, _EPOLL_CTL_DEL = 1, 2


class _EpollEvent(ctypes.Structure):
    # struct epoll_event: the events mask, then a union whose first member is the fd.
    # The kernel packs it on x86_64 only.
    _pack_ = 1 if platform.machine() == "x86_64" else 0
    _fields_ = [("events", ctypes.c_uint32), ("fd", ctypes.c_int32), ("pad", ctypes.c_uint32)]


def _load() -> ctypes.PyDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.PyDLL(None, use_errno=True)  # PyDLL: calls keep the lock
        for name in ("pipe2", "close", "epoll_ctl"):
            getattr(libc, name)
    except (OSError, AttributeError):
        return None
    return libc


# Also what posixspawn builds its file actions with.
LIBC = _load()


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def pipe() -> tuple[int, int]:
    """A pipe whose ends are close-on-exec: (read end, write end)."""
    if LIBC is None:
        return os.pipe2(os.O_CLOEXEC)
    fds = (ctypes.c_int * 2)()
    if LIBC.pipe2(fds, os.O_CLOEXEC) != 0:
        raise _fail("pipe2")
    return fds[0], fds[1]


def close(fd: int) -> None:
    """Close `fd`."""
    if LIBC is None:
        os.close(fd)
    elif LIBC.close(fd) != 0:
        raise _fail("close")


def watch(epoll: select.epoll, fd: int, events: int) -> None:
    """Add `fd` to `epoll` for `events`."""
    if LIBC is None:
        epoll.register(fd, events)
        return
    event = _EpollEvent(events, fd, 0)
    if LIBC.epoll_ctl(epoll.fileno(), _EPOLL_CTL_ADD, fd, ctypes.byref(event)) != 0:
        raise _fail("epoll_ctl")


def unwatch(epoll: select.epoll, fd: int) -> None:
    """Remove `fd` from `epoll`."""
    if LIBC is None:
        epoll.unregister(fd)
    elif LIBC.epoll_ctl(epoll.fileno(), _EPOLL_CTL_DEL, fd, None) != 0:
        raise _fail("epoll_ctl")
