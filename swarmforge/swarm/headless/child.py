"""One role's process under the headless runner, and its restart schedule."""

from __future__ import annotations

import os

from swarmforge import fsutil, logfile
from swarmforge.config.settings import Restart
from swarmforge.errors import SwarmforgeError
from swarmforge.proc import popen

TAIL_BYTES = 8192  # of the role's log read for the last lines of an exited process


class Child:
    """One role's process and its restart schedule."""

    def __init__(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        log: str,
        policy: Restart,
        agent: bool = True,
        give_up_after: int = 5,
    ) -> None:
        self.argv, self.cwd, self.env, self.log, self.policy = argv, cwd, env, log, policy
        self.give_up_after = give_up_after  # quick exits in a row that leave it down
        self.agent = agent  # an agent's starts are paced (ramp.py); an exec role's are not
        self.proc: popen.Started | None = None
        self.restarts = 0
        self.next_start = 0.0
        self.finished = False  # exited, and its policy says it stays so
        self.unlogged: str | None = None  # why the last start's output goes nowhere

    def start(self) -> int:
        """Start the process; its pid.

        Its output is appended to its log; where the log is no regular file (a FIFO
        would block the runner until a reader came), the output is discarded and
        `unlogged` says why.
        """
        try:
            out = logfile.open_log(self.log)
            self.unlogged = None
        except SwarmforgeError as exc:
            out = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
            self.unlogged = f"{exc.message} Its output is discarded."
        try:
            self.proc = popen.start(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=popen.DEVNULL,
                stdout=out,
                stderr=popen.STDOUT,
                session=True,
            )
        finally:
            os.close(out)
        return self.proc.pid

    def tail(self) -> list[str]:
        """The last lines of the role's log."""
        try:
            _, data = fsutil.read_end(self.log, TAIL_BYTES)
        except OSError:
            return []
        return data.decode(errors="replace").splitlines()
