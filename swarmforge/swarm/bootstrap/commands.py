"""Setup commands: each run once in a role's new worktree, ended when out of time."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping

from swarmforge import fsutil, logfile
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.errors import shell_status
from swarmforge.proc import popen
from swarmforge.swarm.bootstrap.marks import SetupFailure, stamp_now

TAIL_LINES = 20


KILL_GRACE = 3.0  # seconds between SIGTERM and SIGKILL for a setup command out of time


def run_setup(
    role: RoleRecord, command: str, env: Mapping[str, str], log_path: str, timeout: float
) -> SetupFailure | None:
    """Run one setup command in the worktree, its output appended to the role's log."""
    with os.fdopen(logfile.open_log(log_path), "ab") as out:  # a FIFO there is refused
        out.write(f"swarmforge bootstrap: $ {command}\n".encode())
        out.flush()
        begin = os.fstat(out.fileno()).st_size
        started = time.monotonic()
        child = popen.start(
            ["sh", "-c", command],
            cwd=role.path,
            env=env,
            stdin=popen.DEVNULL,
            stdout=out.fileno(),
            stderr=popen.STDOUT,
            session=True,
        )
        code = _wait(child, timeout)
        took = time.monotonic() - started
        ended = f"exited {code}" if code is not None else f"timed out after {timeout:g}s"
        out.write(f"swarmforge bootstrap: {ended} in {took:.1f}s\n".encode())
    if code == 0:
        return None
    return SetupFailure(
        role=role.name,
        reason=f"setup command `{command}` {ended}",
        command=command,
        exit_code=code,
        timed_out=code is None,
        last_lines=tuple(_tail(log_path, begin)),
        log=log_path,
        at=stamp_now(),
    )


def _wait(child: popen.Started, timeout: float) -> int | None:
    """The command's exit as a shell shows it; None if it ran out of time (its whole
    process group is then ended: TERM, then KILL after a grace)."""
    try:
        return shell_status(child.wait(timeout))
    except subprocess.TimeoutExpired:
        pass
    for signum, grace in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signum)
        try:
            child.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)  # what the shell left behind in its group
    return None


def _tail(log_path: str, begin: int) -> list[str]:
    """The last lines the command wrote (the log from offset `begin` on)."""
    try:
        text = fsutil.read_end(log_path, 16384, begin)[1].decode(errors="replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if not line.startswith("swarmforge bootstrap: ")]
    return lines[-TAIL_LINES:]
