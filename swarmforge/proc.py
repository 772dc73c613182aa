"""The one subprocess entry point: resolve the binary, scrub GIT_*, decide by exit code.

Built on os.posix_spawn rather than the subprocess module, whose import alone
costs several milliseconds of the agent-facing helpers' budget.
"""

from __future__ import annotations

import os
import select

from swarmforge.errors import SwarmforgeError


class Completed:
    """The outcome of a finished command."""

    __slots__ = ("argv", "returncode", "stderr", "stdout")

    def __init__(self, argv: list[str], returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    @property
    def ok(self) -> bool:
        """True when the command exited 0."""
        return self.returncode == 0


def exists(pid: int) -> bool:
    """True if process `pid` exists (zombies included: their files are closed anyway)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def which(name: str, path: str | None = None) -> str | None:
    """The absolute path of executable `name` on `path` (default: $PATH), or None."""
    if "/" in name:
        return name if os.access(name, os.X_OK) else None
    for directory in (path if path is not None else os.environ.get("PATH", "")).split(":"):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child: ours without GIT_* variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(extra or {})
    return env


def _pump(out_fd: int, err_fd: int, in_fd: int, data: bytes) -> tuple[bytes, bytes]:
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    poller = select.poll()
    poller.register(out_fd, select.POLLIN)
    poller.register(err_fd, select.POLLIN)
    open_fds = {out_fd, err_fd}
    pending = memoryview(data)
    if pending:
        poller.register(in_fd, select.POLLOUT)
    else:
        os.close(in_fd)
    while open_fds or pending:
        for fd, _event in poller.poll():
            if fd == in_fd:
                try:
                    pending = pending[os.write(fd, pending[:65536]) :]
                except BrokenPipeError:
                    pending = pending[:0]  # the child stopped reading; its exit code decides
                if not pending:
                    poller.unregister(fd)
                    os.close(fd)
                continue
            chunk = os.read(fd, 65536)
            if chunk:
                chunks[fd].append(chunk)
            else:
                poller.unregister(fd)
                open_fds.discard(fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def run(argv: list[str], *, input: bytes = b"", env: dict[str, str] | None = None) -> Completed:
    """Run `argv` to completion with captured output; raises only if it cannot start.

    There is no `cwd`: posix_spawn has no chdir action before Python 3.13, and
    the tools run here take a directory option (`git -C DIR`).
    """
    exe = which(argv[0])
    if exe is None:
        raise SwarmforgeError(
            f"Cannot find '{argv[0]}' on PATH.", hint=f"Install {argv[0]} or add it to PATH."
        )
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions = [
        (os.POSIX_SPAWN_DUP2, in_r, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
    ]
    for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
        os.set_inheritable(fd, False)
    full_env = env if env is not None else child_env()
    try:
        pid = os.posix_spawn(exe, argv, full_env, file_actions=actions)
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    try:
        out, err = _pump(out_r, err_r, in_w, input)
    finally:
        for fd in (out_r, err_r):
            os.close(fd)
    _, status = os.waitpid(pid, 0)
    return Completed(argv, os.waitstatus_to_exitcode(status), out, err)


def run_in(
    argv: list[str], *, cwd: str, env: dict[str, str], input: bytes = b"", output: int | None = None
) -> int:
    """Run `argv` in `cwd` feeding it `input`, its output to file descriptor `output`; its exit.

    For the swarm's own commands (exec roles), not the helpers' hot path, so the
    subprocess module is fine here. Raises SwarmforgeError if it cannot start.
    """
    import subprocess

    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            input=input,
            stdout=output,
            stderr=subprocess.STDOUT if output is not None else None,
            check=False,
        ).returncode
    except OSError as exc:
        raise SwarmforgeError(f"Cannot run '{argv[0]}' in {cwd}: {exc.strerror}.") from None
