"""What an agent's tmux screen shows: an approval prompt or dialog, or a turn in progress."""

from __future__ import annotations

SCREEN_LINES = 25
# What an approval prompt, question or dialog shows, in claude's and codex's words: the
# approvals, the trust questions, and the login and first-run screens (an agent there
# waits for a person as much as at an approval).
PROMPTS = (
    "Do you want to",
    "Would you like to",
    "Do you trust",
    "Yes, I trust this folder",  # claude's trust question
    "Press enter to confirm",
    "Allow command?",
    "[y/N]",
    "[Y/n]",
    "(y/n)",
    "Select login method",  # claude's login
    "Choose the text style",  # claude's first-run theme
    "Sign in with ChatGPT",  # codex's login
    "Paste or type your API key",
    "Hooks need review",  # codex's question before it runs new hooks
)


def _last_line(screen: list[str], markers: tuple[str, ...]) -> str | None:
    """The last line with one of `markers` among the screen's last lines that show text.

    Blank lines do not count: codex draws from the top of a tall pane and leaves the
    rest of it empty.
    """
    shown = [line for line in screen if line.strip()]
    for line in reversed(shown[-SCREEN_LINES:]):
        if any(marker in line for marker in markers):
            return line
    return None


def prompt_line(screen: list[str]) -> str | None:
    """The line of an approval prompt or dialog among a screen's last lines, if any."""
    return _last_line(screen, PROMPTS)


def working_line(screen: list[str], markers: tuple[str, ...]) -> str | None:
    """The status line of a turn in progress (one with an agent's `working_markers`) among a
    screen's last lines, if any."""
    return _last_line(screen, markers)
