"""Command workers run as child processes, watched from the orchestrator's own thread.

`start` starts a child at once (`popen.start`, on the subprocess module) with
/dev/null as stdin and one pipe for stdout and one for stderr. One selector
watches every child's pipes, of which the last `TAIL` bytes are kept, and a
wake-up pipe for other threads. A child is reaped once both its pipes are at end
of file. One whose exit is not posted yet by then (it closed its output early,
or the kernel closes a dying process's files a moment before it can be reaped)
is polled on each `wait`, soon at first and then less often. Nothing here is
specific to one system: `selectors` picks what the system offers.

Everything runs on the orchestrator's thread: a thread per child would spend
its time fighting for the interpreter lock (with 16 workers on two cores,
spawning alone once cost more than the tasks).
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import selectors
import time
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING

from swarmforge import host
from swarmforge.proc import policy, popen
from swarmforge.run.executables import Executables
from swarmforge.run.report.markdown import TAIL
from swarmforge.run.spawned import Child

if TYPE_CHECKING:
    from swarmforge.proc.popen import Started

CHUNK = 65536
# How soon, then how rarely, a child whose output is closed is polled for its exit.
LINGER_FIRST, LINGER_MOST = 0.0005, 0.05


class Spawner:
    """Starts commands and reports each one once it has exited and its output is read."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = host.pipe()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._devnull = os.open(os.devnull, os.O_RDONLY)
        self._shared: tuple[Mapping[str, str] | None, policy.Environment] = (
            None,
            policy.Environment(),
        )
        self._found = Executables()
        self._failed: collections.deque[Child] = collections.deque()
        self._lingering: list[Child] = []  # output closed, exit not seen yet
        self.children: dict[int, Child] = {}

    def __enter__(self) -> Spawner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wake(self) -> None:
        """Make a `wait` in progress return now (safe from any thread)."""
        with contextlib.suppress(BlockingIOError):  # the pipe is full of wake-ups already
            os.write(self._wake_w, b"\0")

    def start(
        self,
        key: Hashable,
        argv: list[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        extra: Mapping[str, str] | None = None,
    ) -> None:
        """Start `argv` (no shell) in `cwd` with `env` and `extra` (which wins where both
        have a name); `wait` reports how it ends, or that it could not be started.

        `env` is meant to be the one environment many commands share: the process
        policy is applied to it once for as long as the same mapping keeps coming, and
        it must not change meanwhile.
        """
        try:
            started, out_r, err_r = self._spawn(argv, cwd, self._environment(env), extra)
        except Exception as exc:  # reported as this command's failure, never raised
            failed = Child(key)
            failed.error = exc if isinstance(exc, OSError) else OSError(errno.EIO, repr(exc))
            self._failed.append(failed)
            return
        child = Child(key, started)
        self.children[child.pid] = child
        self._selector.register(out_r, selectors.EVENT_READ, (child, child.out))
        self._selector.register(err_r, selectors.EVENT_READ, (child, child.err))

    def _environment(self, env: Mapping[str, str]) -> policy.Environment:
        if env is not self._shared[0]:
            self._shared = (env, policy.environment(env))
        return self._shared[1]

    def _spawn(
        self, argv: list[str], cwd: str, env: policy.Environment, extra: Mapping[str, str] | None
    ) -> tuple[Started, int, int]:
        fds: list[int] = []
        try:
            fds += os.pipe()
            fds += os.pipe()
            path = (extra or {}).get("PATH", env.get("PATH", os.defpath))
            for again in (False, True):
                try:
                    started = popen.start(
                        argv,
                        executable=self._found.find(argv[0], path),
                        cwd=cwd,
                        env=env,
                        extra=extra,
                        stdin=self._devnull,
                        stdout=fds[1],
                        stderr=fds[3],
                    )
                    break
                except (FileNotFoundError, PermissionError, NotADirectoryError):
                    # What the run found on its PATH may be gone or changed: look again.
                    if again or not self._found.forget(argv[0], path):
                        raise
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        os.close(fds[1])
        os.close(fds[3])
        return started, fds[0], fds[2]

    def wait(self, timeout: float | None) -> list[Child]:
        """The children that finished, or could not be started, within `timeout` seconds."""
        done = []
        while self._failed:
            done.append(self._failed.popleft())
        if done:
            timeout = 0
        elif self._lingering:
            timeout = self._linger_timeout(timeout)
        for key, _ in self._selector.select(timeout):
            if key.data is None:
                self._drain_wakeups()
                continue
            child, buf = key.data
            if self._read(key.fd, buf):
                continue
            child.open -= 1
            if child.open == 0:
                child.closed_at = time.monotonic()
                self._lingering.append(child)
        if self._lingering:
            self._reap(done)
        return done

    def _read(self, fd: int, buf: bytearray) -> bool:
        """Read what `fd` holds into `buf`; False (and `fd` closed) at end of file."""
        chunk = os.read(fd, CHUNK)
        if chunk:
            buf += chunk
            if len(buf) > 2 * TAIL:
                del buf[:-TAIL]
            return True
        self._selector.unregister(fd)
        os.close(fd)
        return False

    def _linger_timeout(self, timeout: float | None) -> float:
        age = time.monotonic() - max(child.closed_at for child in self._lingering)
        soon = min(max(age / 2, LINGER_FIRST), LINGER_MOST)
        return soon if timeout is None else min(soon, timeout)

    def _reap(self, done: list[Child]) -> None:
        still = []
        for child in self._lingering:
            assert child.proc is not None
            code = child.proc.poll()
            if code is None:
                still.append(child)
                continue
            child.code = code
            del self.children[child.pid]
            done.append(child)
        self._lingering = still

    def _drain_wakeups(self) -> None:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        """Kill and reap whatever still runs, and release every descriptor."""
        for child in self.children.values():
            if child.proc is not None and child.proc.poll() is None:
                child.proc.kill()
                child.proc.wait()
        for key in list(self._selector.get_map().values()):
            self._selector.unregister(key.fd)
            if key.data is not None:
                os.close(key.fd)
        self.children.clear()
        self._lingering.clear()
        self._selector.close()
        for fd in (self._wake_r, self._wake_w, self._devnull):
            os.close(fd)
