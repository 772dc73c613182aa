"""Wake-ups: telling a recipient that mail arrived, behind one small interface.

A wake-up is a courtesy, never part of delivery: the daemon calls these only
after the copy is in place, and a failure is logged and retried, never undone.
"""

from __future__ import annotations

import hashlib
import os

from swarmforge import proc
from swarmforge.project import RoleEntry

WAKE_LINE = "You have new handoff mail. If idle, run ready_for_next.sh."


class WakeFailed(Exception):
    """The wake-up could not be sent; worth retrying."""


def project_socket(root: str) -> str:
    """The name of the project's private tmux socket (`tmux -L NAME`)."""
    digest = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:12]
    return f"swarmforge-{digest}"


class Notifier:
    """Sends nothing: for headless roles that poll, and for tests."""

    name = "none"

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        """Wake `role`; False when it has nothing to wake (not an error)."""
        return False


class TmuxNotifier(Notifier):
    """Types the generic wake line into the role's tmux session, then Enter."""

    name = "tmux"

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def _tmux(self, *args: str) -> proc.Completed:
        return proc.run(["tmux", "-L", self.socket, *args])

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        target = f"={entry.session}"
        if not self._tmux("has-session", "-t", target).ok:
            return False  # a role without a session (headless) has nothing to wake
        # Text and Enter go separately: agents' prompts treat a pasted newline as text.
        for keys in (["-l", WAKE_LINE], ["Enter"]):
            result = self._tmux("send-keys", "-t", f"{target}:", *keys)
            if not result.ok:
                raise WakeFailed(result.stderr.decode(errors="replace").strip())
        return True


class CommandNotifier(Notifier):
    """Runs a command per wake-up, with the role described in its environment."""

    name = "command"

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def wake(self, role: str, entry: RoleEntry, root: str) -> bool:
        env = proc.child_env(
            {
                "SWARMFORGE_ROLE": role,
                "SWARMFORGE_WORKTREE": entry.path,
                "SWARMFORGE_PROJECT": root,
                "SWARMFORGE_WAKE_LINE": WAKE_LINE,
            }
        )
        result = proc.run(self.argv, env=env)
        if not result.ok:
            raise WakeFailed(
                f"{self.argv[0]} exited {result.returncode}: "
                f"{result.stderr.decode(errors='replace').strip()[:200]}"
            )
        return True


def make(kind: str, root: str, command: list[str] | None = None) -> Notifier:
    """The notifier called `kind` (tmux, none or command)."""
    if kind == "tmux":
        return TmuxNotifier(project_socket(root))
    if kind == "command":
        if not command:
            raise ValueError("the command notifier needs a command")
        return CommandNotifier(command)
    return Notifier()
