"""Running a command to completion with captured output (`run`), without the subprocess module.

`run` is built on os.posix_spawn rather than the subprocess module, whose import
alone costs several milliseconds of the agent-facing helpers' budget (their git
calls come here); the other ways of starting a child (`popen`, `detach`,
`replace`) import it when first called.
"""

from __future__ import annotations

# Not the signal module: importing it (enum with it) would cost the helpers ~5 ms.
# _signal is the built-in module under it, loaded when the interpreter starts.
import _signal  # type: ignore[import-not-found]  # built in, without a stub
import os
import select

from swarmforge.errors import SwarmforgeError
from swarmforge.proc.policy import environment

# Not typing.TYPE_CHECKING: importing typing would cost the helpers ~10 ms (mypy
# knows the name either way).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


# What Python ignores and an ignored signal keeps across exec: a child gets the default
# back, so that `yes | head -1` in it ends as in a shell (subprocess does the same).
DEFAULT_SIGNALS: tuple[int, ...] = (_signal.SIGPIPE, _signal.SIGXFSZ)


class Completed:
    """The outcome of a finished command (`cut`: it had more to say than was read, and was
    ended for it)."""

    __slots__ = ("argv", "cut", "returncode", "stderr", "stdout")

    def __init__(
        self, argv: list[str], returncode: int, stdout: bytes, stderr: bytes, cut: bool = False
    ) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.cut = cut

    @property
    def ok(self) -> bool:
        """True when the command exited 0."""
        return self.returncode == 0


def which(name: str, path: str | None = None) -> str | None:
    """The absolute path of executable `name` on `path` (default: $PATH), or None."""
    if "/" in name:
        return name if os.access(name, os.X_OK) else None
    for directory in (path if path is not None else os.environ.get("PATH", "")).split(":"):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _close(held: set[int], *fds: int) -> None:
    """Close each of `fds` that is still in `held`, and forget it there."""
    for fd in fds:
        if fd in held:
            held.discard(fd)
            os.close(fd)


def _pump(
    out_fd: int, err_fd: int, in_fd: int, data: bytes, held: set[int], limit: int | None = None
) -> tuple[bytes, bytes, bool]:
    """Feed `data` to `in_fd`, closing it after, and read `out_fd` and `err_fd` to their end.

    With `limit`, reading stops once `out_fd` gave more than `limit` bytes: its first
    `limit` are kept, and True says that the rest was never read.
    """
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    got = 0  # bytes read from out_fd
    poller = select.poll()
    poller.register(out_fd, select.POLLIN)
    poller.register(err_fd, select.POLLIN)
    open_fds = {out_fd, err_fd}
    pending = memoryview(data)
    if pending:
        poller.register(in_fd, select.POLLOUT)
    else:
        _close(held, in_fd)  # at once: a child reading its stdin sees its end
    while open_fds or pending:
        for fd, _event in poller.poll():
            if fd == in_fd:
                try:
                    pending = pending[os.write(fd, pending[:65536]) :]
                except BrokenPipeError:
                    pending = pending[:0]  # the child stopped reading; its exit code decides
                if not pending:
                    poller.unregister(fd)
                    _close(held, fd)
                continue
            # Never more than one byte past `limit`: enough to know there is more.
            want = 65536 if fd != out_fd or limit is None else min(65536, limit + 1 - got)
            chunk = os.read(fd, want)
            if not chunk:
                poller.unregister(fd)
                open_fds.discard(fd)
                continue
            chunks[fd].append(chunk)
            if fd == out_fd:
                got += len(chunk)
                if limit is not None and got > limit:
                    return b"".join(chunks[out_fd])[:limit], b"".join(chunks[err_fd]), True
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd]), False


def run(
    argv: list[str],
    *,
    input: bytes = b"",
    env: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> Completed:
    """Run `argv` to completion with captured output; raises only if it cannot start.

    There is no `cwd`: posix_spawn has no chdir action before Python 3.13, and
    the tools run here take a directory option (`git -C DIR`). Interrupted while it
    runs (Ctrl-C), the child is killed and reaped before the interruption goes on.
    With `limit`, a child whose output runs past `limit` bytes is killed there: the
    first `limit` are kept, and `Completed.cut` says so.
    """
    exe = which(argv[0])
    if exe is None:
        raise SwarmforgeError(
            f"Cannot find '{argv[0]}' on PATH.", hint=f"Install {argv[0]} or add it to PATH."
        )
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    held = {in_r, in_w, out_r, out_w, err_r, err_w}
    actions = [
        (os.POSIX_SPAWN_DUP2, in_r, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
    ]
    pid = 0
    try:
        pid = os.posix_spawn(
            exe, argv, environment(env), file_actions=actions, setsigdef=DEFAULT_SIGNALS
        )
        _close(held, in_r, out_w, err_w)  # the child's ends: its exit then ends our reads
        out, err, cut = _pump(out_r, err_r, in_w, input, held, limit)
        if cut:
            os.kill(pid, _signal.SIGKILL)  # what it would say next is not wanted
    except BaseException:
        if pid:
            # Neither left running nor a zombie, for a caller that goes on afterwards.
            os.kill(pid, _signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    finally:
        _close(held, *tuple(held))
    _, status = os.waitpid(pid, 0)
    return Completed(argv, os.waitstatus_to_exitcode(status), out, err, cut)
