"""libc's posix_spawn, called so that the interpreter lock is released while it runs.

`posix_spawn` suspends its caller until the child has exec'd. Both of CPython
3.11's ways to start a process (`os.posix_spawn`, and `subprocess`, which uses
vfork) hold the interpreter lock for that whole wait, so while one task starts
nothing else in the orchestrator moves. Through ctypes the lock is released,
and `posix_spawn_file_actions_addchdir_np` (glibc 2.29, musl 1.1.24) starts the
child in its own working directory. `available()` says whether this libc has
what is needed; without it the spawner falls back to `subprocess`.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence

from swarmforge.run import quick

# glibc's flag values (bits/spawn.h); musl uses the same ones.
_SETSIGDEF = 0x04
# Opaque structures: generous buffers, larger than any libc's definition of them.
_ACTIONS, _ATTR, _SIGSET = 512, 1024, 256
# What subprocess's restore_signals gives back to a child: Python ignores these.
DEFAULT_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ") if hasattr(signal, name)
)


def _load() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.posix_spawn_file_actions_addchdir_np  # noqa: B018 - probe: missing before 2.29
    except (OSError, AttributeError):
        return None
    return libc


_libc = _load()
# The same functions called without releasing the interpreter lock: building file
# actions only fills memory, and a release and re-take per call costs two thread
# switches whenever another thread waits for the lock (see `quick`).
_held = quick.LIBC if _libc is not None else None
# glibc 2.34 and later; without it only this process's own descriptors are sure to be
# close-on-exec (Python makes every one it opens so).
_closefrom = getattr(_held, "posix_spawn_file_actions_addclosefrom_np", None)


def available() -> bool:
    """True if `spawn` can be used here."""
    return _libc is not None and _held is not None


def _check(err: int, what: str) -> None:
    if err:
        raise OSError(err, f"{what}: {os.strerror(err)}")


class _Attributes:
    """The spawn attributes every child shares (default signal actions), made once."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        self.buffer = ctypes.create_string_buffer(_ATTR)
        sigset = ctypes.create_string_buffer(_SIGSET)
        _check(libc.posix_spawnattr_init(self.buffer), "posix_spawnattr_init")
        libc.sigemptyset(sigset)
        for signum in DEFAULT_SIGNALS:
            libc.sigaddset(sigset, int(signum))
        _check(libc.posix_spawnattr_setsigdefault(self.buffer, sigset), "setsigdefault")
        _check(libc.posix_spawnattr_setflags(self.buffer, ctypes.c_short(_SETSIGDEF)), "setflags")


_attributes: _Attributes | None = None


def spawn(
    path: str,
    argv: Sequence[str],
    env: Sequence[bytes] | ctypes.Array[ctypes.c_char_p],
    *,
    cwd: str,
    stdio: tuple[int, int, int],
) -> int:
    """Start `path` with `argv` and `env` (`KEY=value` entries, or an `environ` array) in
    `cwd`, its stdin, stdout and stderr dup'ed from `stdio`; the child's pid. OSError if it
    cannot be started."""
    global _attributes
    libc, held = _libc, _held
    assert libc is not None and held is not None, "posixspawn.spawn() without available()"
    if _attributes is None:
        _attributes = _Attributes(libc)  # read-only once made: shared by every thread
    actions = ctypes.create_string_buffer(_ACTIONS)
    _check(held.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init")
    try:
        for target, fd in enumerate(stdio):
            _check(held.posix_spawn_file_actions_adddup2(actions, fd, target), "adddup2")
        _check(held.posix_spawn_file_actions_addchdir_np(actions, os.fsencode(cwd)), "addchdir")
        if _closefrom is not None:
            # As subprocess's close_fds: nothing but stdin, stdout and stderr crosses exec,
            # not even a descriptor this process inherited without close-on-exec.
            _check(_closefrom(actions, 3), "addclosefrom")
        args = (ctypes.c_char_p * (len(argv) + 1))(*map(os.fsencode, argv), None)
        envp = env if isinstance(env, ctypes.Array) else environ(env)
        pid = ctypes.c_int()
        err = libc.posix_spawn(
            ctypes.byref(pid), os.fsencode(path), actions, _attributes.buffer, args, envp
        )
        if err:
            raise OSError(err, os.strerror(err), path)
        return pid.value
    finally:
        held.posix_spawn_file_actions_destroy(actions)


def environ(entries: Sequence[bytes], slots: int = 0) -> ctypes.Array[ctypes.c_char_p]:
    """`entries` as the NULL-terminated array `spawn` passes, with `slots` empty places
    before the NULL for entries set later. Filling one costs a microsecond per entry: an
    environment many children share is worth making once."""
    return (ctypes.c_char_p * (len(entries) + slots + 1))(*entries)


def entry(key: str, value: str) -> bytes:
    """One `KEY=value` entry of the environment `spawn` takes."""
    return os.fsencode(key) + b"=" + os.fsencode(value)
