"""Command workers run as child processes, watched from the orchestrator's own thread.

One epoll set watches every child's stdout and stderr (pipes, of which the
last `TAIL` bytes are kept) and a wake-up pipe for other threads; a child is
reaped once both pipes are at end of file (or, if it closed them early, when its
pidfd says it exited). Linux only, as pidfds are. A thread per task would
spend its time fighting for the interpreter lock: with 16 workers on two cores,
spawning alone cost more than the tasks.

Starting a process suspends the starter until the child has exec'd, so
`SPAWNERS` threads start the children (through `posixspawn`, which releases the
interpreter lock meanwhile) while the orchestrator goes on with the rest. Each
child gets /dev/null as stdin, the default action for the signals Python
ignores (as `subprocess` does), and its executable is found on the PATH of the
environment it is given.
"""

from __future__ import annotations

import ctypes
import errno
import os
import queue
import select
import shutil
import signal
import subprocess
import threading
from collections.abc import Hashable, Mapping

from swarmforge.run import posixspawn, quick
from swarmforge.run.report import TAIL

SPAWNERS = 2
_WAKE, _OUT, _ERR, _EXIT = 0, 1, 2, 3
Request = tuple[Hashable, list[str], str, Mapping[str, str], Mapping[str, str]]


class Child:
    """One command: running, finished, or that could not be started (`error`)."""

    __slots__ = ("code", "err", "error", "fds", "key", "out", "pid", "pidfd", "proc")

    def __init__(self, key: Hashable, pid: int, fds: list[int]) -> None:
        self.key, self.pid = key, pid
        # Kept while the child runs, or Popen's own reaping of forgotten children could
        # take ours from under us.
        self.proc: subprocess.Popen[bytes] | None = None
        self.fds = fds  # stdout, then stderr; -1 once at end of file
        self.out, self.err = bytearray(), bytearray()
        self.pidfd = -1
        self.code: int | None = None
        self.error: OSError | None = None

    @property
    def finished(self) -> bool:
        """Exited and both pipes drained."""
        return self.code is not None and self.fds == [-1, -1]


class _Environ:
    """One spawning thread's encoding of the environment its commands share, with a
    place for each entry that differs from one command to the next (`extra`)."""

    def __init__(self) -> None:
        self._env: Mapping[str, str] | None = None
        self._names: tuple[str, ...] = ()
        self._shared = 0
        self._array = posixspawn.environ([])

    def array(
        self, env: Mapping[str, str], extra: Mapping[str, str]
    ) -> ctypes.Array[ctypes.c_char_p]:
        """`env` and then `extra` as the array `posixspawn.spawn` takes (valid until the
        next call: a thread starts one command at a time)."""
        names = tuple(extra)
        if env is not self._env or names != self._names:
            shared = [posixspawn.entry(k, v) for k, v in env.items() if k not in extra]
            self._array = posixspawn.environ(shared, len(names))
            self._env, self._names, self._shared = env, names, len(shared)
        for slot, item in enumerate(extra.items(), self._shared):
            self._array[slot] = posixspawn.entry(*item)
        return self._array


class Spawner:
    """Starts commands and reports each one once it has exited and its output is read."""

    def __init__(self, *, native: bool | None = None) -> None:
        # native: start children through posixspawn (the default where libc allows it),
        # else through subprocess.
        self._native = posixspawn.available() if native is None else native
        self._epoll = select.epoll()
        # fd -> (child, what it is); written by the spawning threads and the orchestrator's,
        # each fd by one at a time (it is entered before it is watched, left after).
        self._watched: dict[int, tuple[Child | None, int]] = {}
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._watch(self._wake_r, None, _WAKE)
        self._devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        self._found: dict[tuple[str, str], str] = {}
        self._requests: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        self._failed: queue.SimpleQueue[Child] = queue.SimpleQueue()
        self.children: dict[int, Child] = {}
        self._threads = [
            threading.Thread(target=self._serve, name=f"spawner-{n}", daemon=True)
            for n in range(SPAWNERS)
        ]
        for thread in self._threads:
            thread.start()

    def __enter__(self) -> Spawner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wake(self) -> None:
        """Make a `wait` in progress return now (safe from any thread)."""
        try:
            os.write(self._wake_w, b"\0")
        except BlockingIOError:
            pass  # the pipe is full of wake-ups already

    def start(
        self,
        key: Hashable,
        argv: list[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        extra: Mapping[str, str] | None = None,
    ) -> None:
        """Have `argv` (no shell) started in `cwd` with `env` and `extra` (which wins where
        both have a name); `wait` reports how it ends, or that it could not be started.

        `env` is meant to be the one environment many commands share: it is encoded
        once for as long as the same mapping keeps coming, and must not change meanwhile.
        """
        self._requests.put((key, argv, cwd, env, extra or {}))

    def _watch(self, fd: int, child: Child | None, what: int) -> None:
        self._watched[fd] = (child, what)
        quick.watch(self._epoll, fd, select.EPOLLIN)

    def _unwatch(self, fd: int) -> None:
        quick.unwatch(self._epoll, fd)
        del self._watched[fd]
        quick.close(fd)

    # -- the spawning threads -----------------------------------------------------------------

    def _serve(self) -> None:
        environ = _Environ()
        while (request := self._requests.get()) is not None:
            try:
                child = self._start(environ, *request)
            except Exception as exc:  # a thread that died here would strand its task for good
                failed = Child(request[0], -1, [-1, -1])
                failed.error = exc if isinstance(exc, OSError) else OSError(errno.EIO, repr(exc))
                self._failed.put(failed)
                self.wake()
                continue
            self.children[child.pid] = child
            for which, fd in enumerate(child.fds):
                self._watch(fd, child, _OUT + which)

    def _start(
        self,
        environ: _Environ,
        key: Hashable,
        argv: list[str],
        cwd: str,
        env: Mapping[str, str],
        extra: Mapping[str, str],
    ) -> Child:
        out_r, out_w = quick.pipe()
        try:
            err_r, err_w = quick.pipe()
        except OSError:
            quick.close(out_r)
            quick.close(out_w)
            raise  # out of descriptors: reported as this command's failure to start
        try:
            if self._native:
                stdio = (self._devnull, out_w, err_w)
                envp = environ.array(env, extra)
                path = extra.get("PATH", env.get("PATH", os.defpath))
                return Child(key, self._posix_spawn(argv, cwd, path, envp, stdio), [out_r, err_r])
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**env, **extra},
                stdin=self._devnull,
                stdout=out_w,
                stderr=err_w,
            )
            child = Child(key, proc.pid, [out_r, err_r])
            child.proc = proc
            return child
        except BaseException:
            quick.close(out_r)
            quick.close(err_r)
            raise  # reported by the spawning thread as this command's failure to start
        finally:
            quick.close(out_w)
            quick.close(err_w)

    def _posix_spawn(
        self,
        argv: list[str],
        cwd: str,
        path: str,
        envp: ctypes.Array[ctypes.c_char_p],
        stdio: tuple[int, int, int],
    ) -> int:
        try:
            return posixspawn.spawn(
                self._executable(argv[0], path), argv, envp, cwd=cwd, stdio=stdio
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError):
            if self._found.pop((argv[0], path), None) is None:
                raise
            # What the run found on its PATH is gone or changed: look it up again.
            return posixspawn.spawn(
                self._executable(argv[0], path), argv, envp, cwd=cwd, stdio=stdio
            )

    def _executable(self, name: str, path: str) -> str:
        """`name` looked up on `path` the way exec does (remembered: the PATH is the run's)."""
        if "/" in name:
            return name
        found = self._found.get((name, path))
        if found is None:
            found = shutil.which(name, path=path)
            if found is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
            self._found[(name, path)] = found
        return found

    # -- the orchestrator's thread ------------------------------------------------------------

    def wait(self, timeout: float | None) -> list[Child]:
        """The children that finished, or could not be started, within `timeout` seconds."""
        done = []
        while not self._failed.empty():
            done.append(self._failed.get())
        for fd, events in self._epoll.poll(0 if done else -1 if timeout is None else timeout):
            child, what = self._watched.get(fd, (None, -1))
            if what == _WAKE:
                self._drain_wakeups()
            if child is None:
                continue
            if what == _EXIT:
                self._reap(child)
            else:
                self._read(child, what - _OUT, events)
            if child.finished:
                del self.children[child.pid]
                done.append(child)
        return done

    def _drain_wakeups(self) -> None:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def _read(self, child: Child, which: int, events: int) -> None:
        fd = child.fds[which]
        # A pipe that is empty and closed says only EPOLLHUP: end of file without a read.
        chunk = os.read(fd, 65536) if events & select.EPOLLIN else b""
        if chunk:
            buf = child.out if which == 0 else child.err
            buf += chunk
            if len(buf) > 2 * TAIL:
                del buf[:-TAIL]
            return
        self._unwatch(fd)
        child.fds[which] = -1
        if child.fds == [-1, -1]:
            self._exited(child)

    def _exited(self, child: Child) -> None:
        """Both pipes are closed: reap the child, or watch its pidfd if it still runs."""
        pid, status = os.waitpid(child.pid, os.WNOHANG)
        if pid:
            self._exit_code(child, status)
            return
        child.pidfd = os.pidfd_open(child.pid)
        self._watch(child.pidfd, child, _EXIT)

    def _reap(self, child: Child) -> None:
        if child.pidfd >= 0:
            self._unwatch(child.pidfd)
            child.pidfd = -1
        _, status = os.waitpid(child.pid, 0)
        self._exit_code(child, status)

    @staticmethod
    def _exit_code(child: Child, status: int) -> None:
        child.code = os.waitstatus_to_exitcode(status)
        if child.proc is not None:
            child.proc.returncode = child.code  # reaped here: Popen must not try again

    def close(self) -> None:
        """Kill and reap whatever still runs, and release every descriptor."""
        for _ in self._threads:
            self._requests.put(None)
        for thread in self._threads:
            thread.join()
        for child in list(self.children.values()):
            if child.code is None:
                try:
                    os.kill(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self._reap(child)
            for fd in child.fds:
                if fd >= 0:
                    self._unwatch(fd)
        self.children.clear()
        self._epoll.close()
        for fd in (self._wake_r, self._wake_w, self._devnull):
            os.close(fd)
