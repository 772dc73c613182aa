"""Child processes we start and supervise: a `subprocess.Popen` to wait on, kill or read.

`start` starts one; `output` and `run_in` are `start` run to completion. The
subprocess module is imported when first called, never on the helpers' path.
"""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError
from swarmforge.proc.policy import environment
from swarmforge.proc.spawn import Completed

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from typing import TypeAlias

    Started: TypeAlias = subprocess.Popen[bytes]


# The subprocess module's values for these, without importing it.
PIPE, STDOUT, DEVNULL = -1, -2, -3


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
