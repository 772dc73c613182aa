"""Every child process swarmforge starts: one environment policy, decided by exit code.

Four shapes, all through here:
  `run`     run to completion with captured output (the helpers' git calls);
  `start`   start and supervise: a `subprocess.Popen` to wait on, kill or read
            (`output` and `run_in` are `start` run to completion);
  `detach`  start in the background, in its own session, adopted by init;
  `replace` exec in place of this process, on the user's terminal.

The policy (`environment`): a child inherits our environment, or the one given,
less the variables that locate a git repository (`LOCAL_GIT_VARS`), plus the
caller's own variables (`extra`: a run's tags, a scratch index). A GIT_DIR that
a hook or a shell set must never send a child's git to another repository.

`run` is built on os.posix_spawn rather than the subprocess module, whose
import alone costs several milliseconds of the agent-facing helpers' budget;
the other shapes import it when first called.
"""

from __future__ import annotations

# Not the signal module: importing it (enum with it) would cost the helpers ~5 ms.
# _signal is the built-in module under it, loaded when the interpreter starts.
import _signal  # type: ignore[import-not-found]  # built in, without a stub
import os
import select

from swarmforge import host
from swarmforge.errors import SwarmforgeError

# Not typing.TYPE_CHECKING: importing typing would cost the helpers ~10 ms (mypy
# knows the name either way).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from typing import NoReturn, TypeAlias

    Started: TypeAlias = subprocess.Popen[bytes]

# What `git rev-parse --local-env-vars` lists (git 2.39; tests compare it with the
# installed git's list).
LOCAL_GIT_VARS = frozenset(
    {
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_OBJECT_DIRECTORY",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_INDEX_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_COMMON_DIR",
    }
)
# The subprocess module's values for these, without importing it.
PIPE, STDOUT, DEVNULL = -1, -2, -3
# What Python ignores and an ignored signal keeps across exec: a child gets the default
# back, so that `yes | head -1` in it ends as in a shell (subprocess does the same).
DEFAULT_SIGNALS: tuple[int, ...] = (_signal.SIGPIPE, _signal.SIGXFSZ)


class Environment(dict[str, str]):
    """An environment the policy was applied to: children get it as it is."""


def environment(
    env: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
) -> Environment:
    """`env` (default: ours) less `LOCAL_GIT_VARS`, plus `extra`.

    An `Environment` is taken as it is: the policy made it, and what the caller
    added on purpose (a scratch GIT_INDEX_FILE) stays.
    """
    if isinstance(env, Environment):
        made = Environment(env)
    else:
        base = os.environ if env is None else env
        made = Environment((k, v) for k, v in base.items() if k not in LOCAL_GIT_VARS)
    if extra:
        made.update(extra)
    return made


def child_env(extra: Mapping[str, str] | None = None) -> Environment:
    """Our environment as a child gets it, plus `extra`."""
    return environment(None, extra)


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


def is_alive(pid: int | None) -> bool:
    """True if process `pid` runs: it exists and is not a zombie (one that has ended and
    only waits to be reaped, its files closed)."""
    if pid is None or pid <= 0:
        return False  # 0 and negative pids name process groups to os.kill
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process
    return not host.zombie(pid)


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


def _pump(out_fd: int, err_fd: int, in_fd: int, data: bytes, held: set[int]) -> tuple[bytes, bytes]:
    """Feed `data` to `in_fd`, closing it after, and read `out_fd` and `err_fd` to their end."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
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
            chunk = os.read(fd, 65536)
            if chunk:
                chunks[fd].append(chunk)
            else:
                poller.unregister(fd)
                open_fds.discard(fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def run(argv: list[str], *, input: bytes = b"", env: Mapping[str, str] | None = None) -> Completed:
    """Run `argv` to completion with captured output; raises only if it cannot start.

    There is no `cwd`: posix_spawn has no chdir action before Python 3.13, and
    the tools run here take a directory option (`git -C DIR`). Interrupted while it
    runs (Ctrl-C), the child is killed and reaped before the interruption goes on.
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
        out, err = _pump(out_r, err_r, in_w, input, held)
    except BaseException:
        if pid:
            # Neither left running nor a zombie, for a caller that goes on afterwards.
            os.kill(pid, _signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    finally:
        _close(held, *tuple(held))
    _, status = os.waitpid(pid, 0)
    return Completed(argv, os.waitstatus_to_exitcode(status), out, err)


def start(
    argv: list[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    session: bool = False,
    executable: str | None = None,
) -> Started:
    """Start `argv` (found on the PATH of its environment); the running child.

    stdin, stdout and stderr are inherited unless given (a descriptor, PIPE,
    STDOUT or DEVNULL); `session` puts the child in a session of its own. Only
    stdio crosses exec, and the signals Python ignores get their default action
    back. `executable` spares the search when the caller knows where argv[0] is.
    Raises OSError if it cannot start (missing program or directory).
    """
    import subprocess

    return subprocess.Popen(
        argv,
        executable=executable,
        cwd=cwd,
        env=environment(env, extra),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=session,
    )


def output(
    argv: list[str],
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> Completed:
    """Run `argv` in `cwd` with empty stdin to completion; its output. OSError if it
    cannot start."""
    child = start(argv, cwd=cwd, env=env, extra=extra, stdin=DEVNULL, stdout=PIPE, stderr=PIPE)
    with child:
        out, err = child.communicate()
    return Completed(argv, child.returncode, out, err)


def run_in(
    argv: list[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    input: bytes = b"",
    output: int | None = None,
) -> int:
    """Run `argv` in `cwd` feeding it `input`, its output to file descriptor `output`; its exit.

    For the swarm's own commands (exec roles). Raises SwarmforgeError if it cannot start.
    """
    try:
        child = start(
            argv,
            cwd=cwd,
            env=env,
            stdin=PIPE,
            stdout=output,
            stderr=STDOUT if output is not None else None,
        )
    except OSError as exc:
        raise SwarmforgeError(f"Cannot run '{argv[0]}' in {cwd}: {exc.strerror}.") from None
    with child:
        child.communicate(input)
    return child.returncode


def detach(
    argv: list[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    log: int | None = None,
) -> int:
    """Start `argv` in the background, in a session of its own; its pid.

    A shell starts it with `&` and exits at once: init adopts it, so it is never
    a zombie of ours, it outlives us, and it holds none of our stdin, stdout or
    stderr. Its output goes to descriptor `log`, else to /dev/null. Raises
    SwarmforgeError if the shell cannot start it (a missing `cwd`); a program
    that cannot be found fails in the background, as its own exit.
    """
    import subprocess

    try:
        shell = subprocess.run(
            ["/bin/sh", "-c", 'exec "$@" >&2 &\necho "$!"', "sh", *argv],
            cwd=cwd,
            env=environment(env, extra),
            stdin=DEVNULL,
            stdout=PIPE,
            stderr=DEVNULL if log is None else log,
            start_new_session=True,
            check=False,
        )
    except OSError as exc:
        raise SwarmforgeError(f"Cannot start '{argv[0]}' in {cwd}: {exc.strerror}.") from None
    pid = shell.stdout.strip()
    if shell.returncode != 0 or not pid.isdigit():
        raise SwarmforgeError(f"Cannot start '{argv[0]}' in the background.")
    return int(pid)


def replace(argv: list[str], *, env: Mapping[str, str] | None = None) -> NoReturn:
    """Run `argv` in place of this process, on our terminal (`swarmforge attach`); never returns.

    The fourth shape: the program takes over the terminal and its exit is the
    command's, with nothing of ours left waiting. Same policy as the others: the
    environment less `LOCAL_GIT_VARS`, and the signals Python ignores get their
    default action back (an ignored signal stays ignored across exec).
    """
    import signal
    import sys

    exe = which(argv[0])
    if exe is None:
        raise SwarmforgeError(
            f"Cannot find '{argv[0]}' on PATH.", hint=f"Install {argv[0]} or add it to PATH."
        )
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(exe, argv, environment(env))
    except OSError as exc:
        raise SwarmforgeError(f"Cannot run '{argv[0]}': {exc.strerror}.") from None
