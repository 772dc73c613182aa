"""Wake-ups: telling a recipient that mail arrived, behind one small interface.

A wake-up is a courtesy, never part of delivery: the daemon calls these only
after the copy is in place, and a failure is logged and retried, never undone.
"""

from __future__ import annotations

import logging
import threading
import time

from swarmforge.errors import SwarmforgeError
from swarmforge.proc import policy, spawn
from swarmforge.roletable import RoleEntry
from swarmforge.tmux.server import Tmux, project_socket
from swarmforge.waiting import wait_until

WAKE_LINE = "You have new handoff mail. If idle, run ready_for_next.sh."
PASTE_SETTLE = 0.15  # seconds between a paste and its Enter (codex needs 50 ms or more)
TAKEN_WAIT = 1.0  # seconds to wait for the screen to change after Enter
ENTER_TRIES = 3


class WakeFailed(Exception):
    """The wake-up could not be sent; worth retrying."""


class Waker:
    """Sends nothing: for headless roles that poll, and for tests."""

    name = "none"

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        """Wake `role`; False when it has nothing to wake (not an error)."""
        return False


class TmuxWaker(Waker):
    """Pastes the wake line into the role's tmux session and presses Enter until it is taken.

    Agents' prompts (claude's, codex's) take typed text of about 1,000 characters
    or more as a paste that Enter does not submit, and codex reads an Enter that
    arrives straight after typed text as a newline inside it. So the text goes in
    as one bracketed paste, Enter follows after a pause, and Enter is pressed
    again (a bounded number of times) while the screen shows that nothing
    happened. With `background` (the daemon's case) all of that runs in a thread
    of its own, so a wake-up never holds up a delivery.
    """

    name = "tmux"

    def __init__(
        self, socket: str, *, background: bool = True, log: logging.Logger | None = None
    ) -> None:
        self.socket = socket
        self.tmux = Tmux(socket)
        self.background = background
        self.log = log or logging.getLogger("swarmforge.notify")
        self._lock = threading.Lock()
        self._in_flight: set[str] = set()

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        if not self.tmux.has_session(entry.session):
            return False  # a role without a session (headless) has nothing to wake
        if not self.background:
            if not self.submit(entry.session, WAKE_LINE):
                raise WakeFailed(f"session {entry.session} did not take the wake-up")
            return True
        with self._lock:
            if entry.session in self._in_flight:
                return True  # the wake-up on its way covers this mail too
            self._in_flight.add(entry.session)
        threading.Thread(
            target=self._submit_in_background, args=(entry.session,), daemon=True
        ).start()
        return True

    def _submit_in_background(self, session: str) -> None:
        try:
            if not self.submit(session, WAKE_LINE):
                self.log.warning("%s did not take the wake-up", session)
        except (SwarmforgeError, OSError, WakeFailed) as exc:
            self.log.warning("waking %s failed: %s", session, exc)
        finally:
            with self._lock:
                self._in_flight.discard(session)

    def _changed(self, target: str, before: bytes) -> bool:
        return wait_until(lambda: self.tmux.screen(target) != before, TAKEN_WAIT, 0.05)

    def submit(self, session: str, text: str) -> bool:
        """Paste `text` into `session` and press Enter; True once the screen shows it taken."""
        target = f"={session}:"
        self.tmux.paste(target, text, f"swarmforge-wake-{session}")
        time.sleep(PASTE_SETTLE)
        before = self.tmux.screen(target)
        for _ in range(ENTER_TRIES):
            self.tmux.press(target, "Enter")
            if self._changed(target, before):
                return True
        return False


class CommandWaker(Waker):
    """Runs a command per wake-up, with the role described in its environment."""

    name = "command"

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        env = policy.child_env(
            {
                "SWARMFORGE_ROLE": role,
                "SWARMFORGE_WORKTREE": entry.path,
                "SWARMFORGE_PROJECT": root,
                "SWARMFORGE_WAKE_LINE": WAKE_LINE,
            }
        )
        result = spawn.run(self.argv, env=env)
        if not result.ok:
            raise WakeFailed(
                f"{self.argv[0]} exited {result.returncode}: "
                f"{result.stderr.decode(errors='replace').strip()[:200]}"
            )
        return True


def make(
    kind: str,
    root: str,
    command: list[str] | None = None,
    *,
    background: bool = True,
    log: logging.Logger | None = None,
) -> Waker:
    """The waker called `kind` (tmux, none or command)."""
    if kind == "tmux":
        return TmuxWaker(project_socket(root), background=background, log=log)
    if kind == "command":
        if not command:
            raise ValueError("the command waker needs a command")
        return CommandWaker(command)
    return Waker()
