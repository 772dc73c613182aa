"""What runs in a role's tmux pane: the role's agent, supervised.

tmux hands a pane the PATH of whichever client created its session and ignores
`new-session -e PATH=...`, and a user's shell start-up files may change more.
So a pane runs this supervisor rather than the agent itself: it starts the agent
with the role's whole environment (the helpers first on PATH, the run's tags,
the port), records each start and exit for `status` (exit code, time and the
pane's last lines), and restarts an agent that failed, as the role's `restart`
setting says, with growing pauses. A thread records the agent's state
(agents/probe.py) every few seconds, so each change is recorded near its time.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

from swarmforge.agents import lifecycle, probe
from swarmforge.config import sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.settings import load_settings
from swarmforge.daemon.doorbell import Doorbell
from swarmforge.errors import SwarmforgeError, shell_status
from swarmforge.proc import popen
from swarmforge.swarm import rolecommand
from swarmforge.tmux.server import Tmux, project_socket

CANNOT_START = 127  # as a shell reports a command it cannot run


def _screen_tail(root: str) -> list[str]:
    pane = os.environ.get("TMUX_PANE")
    if not pane:
        return []
    try:
        return Tmux(project_socket(root)).capture(pane)
    except (SwarmforgeError, OSError):
        return []


class Supervisor:
    """Keeps one role's agent running in the current terminal."""

    def __init__(self, root: str, name: str) -> None:
        record = sessionrecord.load(root)
        role = record.role(name) if record else None
        if record is None or role is None:
            raise SwarmforgeError(f"Role '{name}' is not part of a run in {root}.")
        config = load_config(root)
        self.root, self.name, self.run_id, self.cwd = root, name, record.run_id, role.path
        settings = load_settings(root, config.names)
        self.env = rolecommand.process_env(root, config, record.run_id, role, settings, "tmux")
        self.argv = rolecommand.command(root, config, role, self.env, "tmux")
        self.policy = settings.role(name).restart
        self.give_up_after = settings.role(name).give_up_after
        self.stall_after = settings.stall.seconds
        self.done = threading.Event()
        self.child: popen.Started | None = None
        self.stopping = False
        self.doorbell = Doorbell()

    def stop(self, signum: int, frame: FrameType | None) -> None:
        """Pass a stop on to the agent and do not restart it (a signal handler)."""
        self.stopping = True
        self.doorbell.set()
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def _refresh(self) -> None:
        probe.refresh_roles(self.root, (self.name,), self.stall_after)

    def _watch(self) -> None:
        """Record the agent's state every few seconds until the supervisor ends."""
        while not self.done.wait(probe.EVERY):
            self._refresh()

    def _run_once(self, restarts: int) -> int:
        """Start the agent and wait for it; its exit code (127 if it could not start)."""
        try:
            # The agent shares the pane's terminal and process group, as if typed there.
            self.child = popen.start(self.argv, cwd=self.cwd, env=self.env)
        except OSError as exc:
            # Gone since `up` checked it: a failure to start, under the same restart policy.
            self.child = None
            return _cannot_start(self.argv, exc)
        lifecycle.started(self.root, self.name, self.run_id, self.child.pid, restarts)
        self._refresh()
        return shell_status(self.child.wait())

    def serve(self) -> int:
        """Run the agent until it ends for good; its exit code."""
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self.stop)
        # Ctrl-C in the pane is for the agent; a handler (not SIG_IGN) is reset by exec.
        signal.signal(signal.SIGINT, lambda signum, frame: None)
        # A daemon thread: it only reads evidence and writes the state record.
        threading.Thread(target=self._watch, name="agent-state", daemon=True).start()
        try:
            return self._serve()
        finally:
            self.done.set()

    def _serve(self) -> int:
        restarts = 0
        while True:
            code = self._run_once(restarts)
            if self.stopping:
                return code
            tail = _screen_tail(self.root)
            pause = lifecycle.exited(
                self.root, self.name, self.run_id, code, tail, self.policy, self.give_up_after
            )
            self._refresh()
            if pause is None:
                return code
            print(
                f"\n[swarmforge] {self.name}: {self.argv[0]} exited {code}; "
                f"restarting in {pause:.0f} s",
                file=sys.stderr,
                flush=True,
            )
            if self.doorbell.wait(pause) or self.stopping:
                return code
            restarts += 1


def _cannot_start(argv: list[str], exc: OSError) -> int:
    print(f"[swarmforge] cannot start {argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
    return CANNOT_START


def serve(root: str, name: str) -> int:
    """Supervise role `name` of the project at `root` in this terminal; the agent's last exit."""
    return Supervisor(root, name).serve()
