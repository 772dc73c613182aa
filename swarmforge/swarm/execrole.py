"""Headless command roles (`window <role> exec <worktree> [task|batch] <command> ...`).

For each task (or batch) the role accepts, the command runs in the role's
worktree with the ready printout on stdin. Exit 0 completes the item. A
non-zero exit is retried RETRIES times; then the item is completed with the
headers `outcome: failed` and `exit_code: N`, the failure is logged, and the
role moves on.
"""

from __future__ import annotations

import logging
import os

from swarmforge import proc
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import mailbox as mb
from swarmforge.handoff import receive
from swarmforge.handoff.daemon import Waker
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.printout import Batch, Task, batch_text, task_text

RETRIES = 2  # so a failing command runs at most three times per item
IDLE_RESCAN = 5.0


class ExecRole:
    """The loop of one exec role."""

    def __init__(
        self,
        name: str,
        worktree: str,
        mode: str,
        argv: list[str],
        env: dict[str, str],
        log: logging.Logger,
        output: int | None = None,
    ) -> None:
        self.name = name
        self.worktree = worktree
        self.mode = mode
        self.argv = argv
        self.env = env
        self.log = log
        self.output = output
        self.box = Mailbox(worktree)
        self.stopping = False
        self.waker = Waker()

    def stop(self) -> None:
        """Ask the loop to finish the item in hand and return (safe in a signal handler)."""
        self.stopping = True
        self.waker.set()

    def _take(self) -> Task | Batch | None:
        return (
            receive.ready_task(self.box) if self.mode == "task" else receive.ready_batch(self.box)
        )

    def step(self) -> bool:
        """Handle the next item, if any; True if one was handled."""
        work = self._take()
        if work is None:
            return False
        text = task_text(work) if isinstance(work, Task) else batch_text(work)
        env = {**self.env, "SWARMFORGE_TASK": work.path}
        code = 0
        for attempt in range(1 + RETRIES):
            code = proc.run_in(
                self.argv, cwd=self.worktree, env=env, input=text.encode(), output=self.output
            )
            if code == 0:
                break
            self.log.warning(
                "%s: %s exited %d on %s (attempt %d of %d)",
                self.name,
                self.argv[0],
                code,
                os.path.basename(work.path),
                attempt + 1,
                1 + RETRIES,
            )
        if code != 0:
            items = [work] if isinstance(work, Task) else work.items
            for item in items:
                mb.annotate(item.path, [("outcome", "failed"), ("exit_code", str(code))])
            self.log.error(
                "%s: giving up on %s: outcome failed, exit code %d",
                self.name,
                os.path.basename(work.path),
                code,
            )
        if isinstance(work, Task):
            receive.done_task(self.box)
        else:
            receive.done_batch(self.box)
        return True

    def serve(self) -> None:
        """Handle items as they arrive until `stopping` is set."""
        from swarmforge.handoff.watch import Watcher

        watcher = Watcher(self.waker)
        watcher.start()
        watcher.watch([self.box.path(Box.NEW)])
        try:
            while not self.stopping:
                try:
                    while not self.stopping and self.step():
                        pass
                except SwarmforgeError as exc:
                    # A refused mailbox state needs a human; keep reporting it, slowly.
                    self.log.error("%s: %s", self.name, " ".join(exc.lines()))
                if not self.stopping:
                    self.waker.wait(IDLE_RESCAN)
        finally:
            watcher.stop()
