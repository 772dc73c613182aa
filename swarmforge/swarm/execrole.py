"""The per-item loop of headless roles: exec commands, and claude or codex agents.

For each task (or batch) the role accepts, its command runs once in the role's
worktree: an exec role's command with the ready printout on stdin, a headless agent
with the printout in its prompt (see each agent's command.py under agents/). Exit 0
completes the item. A non-zero exit is retried RETRIES times; then the item is
completed with the headers `outcome: failed` and `exit_code: N`, the failure is
logged, and the role moves on. An item the command completed itself (with
done_with_current.sh) is left as it is, and so is one whose command failed while the
loop was being stopped: it stays in process and is resumed on the next start.

`serve_role` is the role's process: it builds the loop from the session record and
serves until SIGTERM.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from types import FrameType

from swarmforge import logfile
from swarmforge.agents import commands
from swarmforge.agents.agent import Invocation
from swarmforge.agents.execagent import exec_argv
from swarmforge.config import rolerecord, sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.roster import SwarmConfig
from swarmforge.daemon.doorbell import Doorbell
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff.done import done_batch, done_task
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.printout import Batch, Task, batch_text, task_text
from swarmforge.handoff.processing import annotate
from swarmforge.handoff.ready import ready_batch, ready_task
from swarmforge.proc import popen
from swarmforge.swarm import placement, rolecommand

# What to run for one item, given its ready printout.
ItemCommand = Callable[[str], Invocation]

RETRIES = 2  # so a failing command runs at most three times per item
IDLE_RESCAN = 5.0


def printout_on_stdin(argv: list[str]) -> ItemCommand:
    """The item command of an exec role: `argv`, reading the ready printout on stdin."""
    return lambda printout: Invocation(list(argv), printout.encode())


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
    return os.path.basename(work.path)


def item_command(root: str, config: SwarmConfig, record: RoleRecord) -> ItemCommand:
    """What role `record` runs per item: its exec command, or its agent's non-interactive mode."""
    spec = config.role(record.name)
    if spec.is_exec:
        return printout_on_stdin(exec_argv(spec))
    if not commands.loops_headless(spec):
        raise SwarmforgeError(
            f"Role '{record.name}' runs agent '{spec.agent}', which has no per-item loop.",
            hint="Only exec roles, and claude or codex roles of a headless run, run one.",
        )
    launch = rolecommand.launch(root, config, record)
    return lambda printout: commands.item_invocation(spec, launch, printout)


def _logger(root: str, name: str) -> logging.Logger:
    return logfile.logger(f"role:{name}", placement.log_file(root, name))


def serve_role(root: str, name: str) -> None:
    """Run the loop of role `name` of the project at `root` until SIGTERM."""
    record = sessionrecord.load(root)
    role = record.role(name) if record else None
    if record is None or role is None:
        raise SwarmforgeError(f"Role '{name}' is not part of a run in {root}.")
    command = item_command(root, load_config(root), role)
    log = _logger(root, name)
    path = placement.log_file(root, name)
    output = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    env = rolerecord.role_env(root, record.run_id, role)
    loop = ExecRole(name, role.path, role.mode, command, env, log, output)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        loop.stop()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    log.info("%s: serving %s items with %s", name, role.mode, role.agent)
    try:
        loop.serve()
    finally:
        os.close(output)
        log.info("%s: stopped", name)
