"""Wake-ups: telling a recipient that mail arrived, behind one small interface.

A wake-up is a courtesy, never part of delivery: the daemon calls these only
after the copy is in place, and a failure is logged and retried, never undone.

An agent with an inbox of its own (claude's messaging socket, agents/inbox.py) is
woken through it: the agent takes the line as its next turn, and never as an answer
to a dialog. Otherwise the wake-up is typed into its terminal, and that never answers
for a person: it is typed only while the agent sits at its idle prompt. While the
agent works, or shows a dialog (an approval, a trust or login question: state
`waiting`), the wake-up is held and looked at again until the agent is back at its
prompt; the screen is read once more just before each keystroke, so a dialog that
opened meanwhile gets none.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from swarmforge import times
from swarmforge.agents import inbox
from swarmforge.agents.registry import agent
from swarmforge.agents.screen import prompt_line
from swarmforge.errors import SwarmforgeError
from swarmforge.proc import policy, spawn
from swarmforge.roletable import RoleEntry
from swarmforge.tempdirs import temp_dir
from swarmforge.text import shown
from swarmforge.tmux.server import Tmux, project_socket
from swarmforge.waiting import wait_until

WAKE_LINE = "You have new handoff mail. If idle, run ready_for_next.sh."
PASTE_SETTLE = 0.15  # seconds between a paste and its Enter (codex needs 50 ms or more)
TAKEN_WAIT = 1.0  # seconds to wait for the screen to change after Enter
ENTER_TRIES = 3
HOLD_POLL = 0.5  # seconds between two looks at an agent whose wake-up is held

# Why a role's agent cannot be typed into now (not at its idle prompt), or None.
Judge = Callable[[str, str], "str | None"]


class WakeFailed(Exception):
    """The wake-up could not be sent; worth retrying."""


class Waker:
    """Sends nothing: for headless roles that poll, and for tests."""

    name = "none"

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        """Wake `role`; False when it has nothing to wake (not an error)."""
        return False


class Held(WakeFailed):
    """The agent is not at its idle prompt: nothing was typed (a daemon in the background
    holds the wake-up until it is; one pass with `--once` retries it as a failure)."""


class TmuxWaker(Waker):
    """Pastes the wake line into the role's tmux session and presses Enter until it is taken.

    Agents' prompts (claude's, codex's) take typed text of about 1,000 characters
    or more as a paste that Enter does not submit, and codex reads an Enter that
    arrives straight after typed text as a newline inside it. So the text goes in
    as one bracketed paste, Enter follows after a pause, and Enter is pressed
    again (a bounded number of times) while the screen shows that nothing
    happened. With `background` (the daemon's case) all of that runs in a thread
    of its own, so a wake-up never holds up a delivery.

    `judge` (the daemon's: the agent's state, agents/probe.py) says whether the
    agent is at its idle prompt; a wake-up is held while it is not. The screen is
    checked for a dialog in any case.
    """

    name = "tmux"

    def __init__(
        self,
        socket: str,
        *,
        background: bool = True,
        log: logging.Logger | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.socket = socket
        self.judge = judge
        self.tmux = Tmux(socket)
        self.background = background
        self.log = log or logging.getLogger("swarmforge.notify")
        self._lock = threading.Lock()
        self._in_flight: set[str] = set()

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        if not self.tmux.has_session(entry.session):
            return False  # a role without a session (headless) has nothing to wake
        if self._to_inbox(role, entry, root):
            return True
        if not self.background:
            self._judged(role, root)
            if not self.submit(entry.session, WAKE_LINE):
                raise WakeFailed(f"session {entry.session} did not take the wake-up")
            return True
        with self._lock:
            if entry.session in self._in_flight:
                return True  # the wake-up on its way (or held) covers this mail too
            self._in_flight.add(entry.session)
        threading.Thread(
            target=self._submit_in_background, args=(role, entry.session, root), daemon=True
        ).start()
        return True

    def _to_inbox(self, role: str, entry: RoleEntry, root: str) -> bool:
        """Hand the wake line to the agent's own inbox; False if it has none listening."""
        path = agent(entry.agent).inbox(temp_dir(root, role))
        if path is None:
            return False
        # claude drops a text it has already taken: each wake-up says when it was sent.
        line = f"{WAKE_LINE} (mail at {times.precise()})"
        try:
            inbox.send(path, line)
        except OSError as exc:
            # An agent still starting, or one whose CLI has no inbox: typed instead.
            self.log.debug("no inbox of %s at %s (%s): typing the wake-up", role, path, exc)
            return False
        self.log.info("woke %s through its agent's inbox", role)
        return True

    def _judged(self, role: str, root: str) -> None:
        """Raise Held unless the judge finds `role`'s agent at its idle prompt."""
        why = self.judge(root, role) if self.judge is not None else None
        if why is not None:
            raise Held(why)

    def _submit_in_background(self, role: str, session: str, root: str) -> None:
        held = ""
        try:
            while True:
                try:
                    self._judged(role, root)
                    taken = self.submit(session, WAKE_LINE)
                    break
                except Held as exc:
                    if str(exc) != held:
                        held = str(exc)  # it may quote the agent's screen: shown escaped
                        self.log.info(
                            "holding the wake-up of %s: its agent is %s", role, shown(held)
                        )
                if not self.tmux.has_session(session):
                    return  # the role is gone: nobody to wake
                time.sleep(HOLD_POLL)
            if held:
                self.log.info("woke %s, held until its agent was at its prompt", role)
            if not taken:
                self.log.warning("%s did not take the wake-up", session)
        except (SwarmforgeError, OSError, WakeFailed) as exc:
            self.log.warning("waking %s failed: %s", session, exc)
        finally:
            with self._lock:
                self._in_flight.discard(session)

    def _changed(self, target: str, before: bytes) -> bool:
        return wait_until(lambda: self.tmux.screen(target) != before, TAKEN_WAIT, 0.05)

    @staticmethod
    def _no_dialog(lines: list[str]) -> None:
        """Raise Held if the screen's `lines` show a question for a person."""
        asked = prompt_line(lines)
        if asked is not None:
            raise Held(f"waiting: its screen shows: {asked.strip()}")

    def _screen(self, target: str) -> bytes:
        """The screen of `target` (to tell a change); raise Held if it shows a dialog."""
        shown = self.tmux.screen(target)
        self._no_dialog(shown.partition(b"\0")[0].decode(errors="replace").splitlines())
        return shown

    def submit(self, session: str, text: str) -> bool:
        """Paste `text` into `session` and press Enter; True once the screen shows it taken.

        Raises Held, having typed nothing more, when the screen shows a dialog: before
        the paste, or before any Enter (a dialog that opened after the paste)."""
        target = f"={session}:"
        self._no_dialog(self.tmux.capture(target))
        self.tmux.paste(target, text, f"swarmforge-wake-{session}")
        time.sleep(PASTE_SETTLE)
        before = self._screen(target)
        for _ in range(ENTER_TRIES):
            self.tmux.press(target, "Enter")
            if self._changed(target, before):
                return True
            self._screen(target)
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
        judge = agent_judge(root)
        return TmuxWaker(project_socket(root), background=background, log=log, judge=judge)
    if kind == "command":
        if not command:
            raise ValueError("the command waker needs a command")
        return CommandWaker(command)
    return Waker()


def agent_judge(root: str) -> Judge:
    """The judge of the project at `root`: its agents' state (agents/probe.py), with the
    project's stall threshold. Evidence that cannot be read leaves the screen to decide."""
    import psutil

    from swarmforge.agents import probe
    from swarmforge.config.alertsettings import StallSettings
    from swarmforge.config.settings import load_settings

    try:
        stall_after = load_settings(root).stall.seconds
    except (SwarmforgeError, OSError):
        stall_after = StallSettings().seconds  # `up` refuses such settings; `status` says why

    def judge(root: str, role: str) -> str | None:
        try:
            return probe.not_at_prompt(root, role, stall_after)
        except (SwarmforgeError, OSError, psutil.Error):
            return None

    return judge
