"""One role's process under the headless runner, and its restart schedule."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.config.settings import Restart
from swarmforge.proc import popen


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

    def start(self) -> int:
        """Start the process; its pid."""
        with Path(self.log).open("ab") as out:
            self.proc = popen.start(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=popen.DEVNULL,
                stdout=out.fileno(),
                stderr=popen.STDOUT,
                session=True,
            )
        return self.proc.pid

    def tail(self) -> list[str]:
        """The last lines of the role's log."""
        try:
            with Path(self.log).open("rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 8192))
                return f.read().decode(errors="replace").splitlines()
        except OSError:
            return []
