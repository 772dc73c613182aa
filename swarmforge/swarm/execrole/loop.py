"""The loop of one headless role: take an item, run its command, retry a failure, complete it."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from swarmforge import tagging
from swarmforge.agents.agent import Invocation
from swarmforge.daemon.doorbell import Doorbell
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff.done import done_batch, done_task
from swarmforge.handoff.inprocess import annotate
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.printout import Batch, Task, batch_text, task_text
from swarmforge.handoff.ready import ready_batch, ready_task
from swarmforge.proc import popen
from swarmforge.swarm.execrole.itemcommand import ItemCommand

RETRIES = 2  # so a failing command runs at most three times per item


IDLE_RESCAN = 5.0


class ExecRole:
    """The loop of one headless role."""

    def __init__(
        self,
        name: str,
        worktree: str,
        mode: str,
        command: ItemCommand,
        env: dict[str, str],
        log: logging.Logger,
        output: int | None = None,
    ) -> None:
        self.name = name
        self.worktree = worktree
        self.mode = mode
        self.command = command
        self.env = env
        self.log = log
        self.output = output
        self.box = Mailbox(worktree)
        self.stopping = False
        self.doorbell = Doorbell()

    def stop(self) -> None:
        """Ask the loop to finish the item in hand and return (safe in a signal handler)."""
        self.stopping = True
        self.doorbell.set()

    def _take(self) -> Task | Batch | None:
        return ready_task(self.box) if self.mode == "task" else ready_batch(self.box)

    def step(self) -> bool:
        """Handle the next item, if any; True if one was handled."""
        work = self._take()
        if work is None:
            return False
        invocation = self.command(task_text(work) if isinstance(work, Task) else batch_text(work))
        code = self._run(invocation, work)
        if not os.path.lexists(work.path):
            # The command completed the item itself; whatever it took next is resumed next.
            self.log.info("%s: %s was completed by its command", self.name, _name(work))
            return True
        if code != 0 and self.stopping:
            # Most likely ended by the same stop: it stays in process and is resumed next time.
            self.log.info("%s: stopping; %s stays in process", self.name, _name(work))
            return True
        if code != 0:
            items = [work] if isinstance(work, Task) else work.items
            for item in items:
                annotate(item.path, [("outcome", "failed"), ("exit_code", str(code))])
            self.log.error(
                "%s: giving up on %s: outcome failed, exit code %d", self.name, _name(work), code
            )
        if isinstance(work, Task):
            done_task(self.box)
        else:
            done_batch(self.box)
        return True

    def _run(self, invocation: Invocation, work: Task | Batch) -> int:
        """Run the item's command, retrying a failure; the last exit code."""
        env = {**self.env, "SWARMFORGE_TASK": work.path}
        code = 0
        for attempt in range(1 + RETRIES):
            code = popen.run_in(
                invocation.argv,
                cwd=self.worktree,
                env=env,
                input=invocation.stdin,
                output=self.output,
            )
            self._end_strays()
            if code == 0 or self.stopping or not os.path.lexists(work.path):
                break
            self.log.warning(
                "%s: %s exited %d on %s (attempt %d of %d)",
                self.name,
                invocation.argv[0],
                code,
                _name(work),
                attempt + 1,
                1 + RETRIES,
            )
        return code

    def _end_strays(self) -> None:
        """End what the command left running without our tags in the role's temporary
        directory: a helper an agent started with an environment of its own (codex's
        sandbox helper outlives `codex exec`). What it left running with our tags (a
        server in the background) is the role's until `down`."""
        temp = self.env.get("TMPDIR")
        left = tagging.strays(temp) if temp else []
        if left:
            tagging.terminate(left)
            self.log.info("%s: ended %d process(es) its command left behind", self.name, len(left))

    def serve(self) -> None:
        """Handle items as they arrive until `stopping` is set."""
        from swarmforge.daemon.arrivals import Arrivals

        arrivals = Arrivals(self.doorbell)
        arrivals.start()
        arrivals.watch([self.box.path(Box.NEW)])
        try:
            while not self.stopping:
                try:
                    while not self.stopping and self.step():
                        pass
                except SwarmforgeError as exc:
                    # A refused mailbox state needs a human; keep reporting it, slowly.
                    self.log.error("%s: %s", self.name, " ".join(exc.lines()))
                if not self.stopping:
                    self.doorbell.wait(IDLE_RESCAN)
        finally:
            arrivals.stop()


def _name(work: Task | Batch) -> str:
    return Path(work.path).name
