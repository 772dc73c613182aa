"""Starting a process in the background, in its own session, adopted by init."""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError
from swarmforge.proc.policy import environment
from swarmforge.proc.popen import DEVNULL, PIPE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


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
