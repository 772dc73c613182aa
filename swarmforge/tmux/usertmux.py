"""The one command line for the user's own tmux, never a swarm's: a new window that runs a
command, which `attach` runs on the person's request.
"""

from __future__ import annotations


def new_window_argv(name: str, argv: list[str], tmux: str = "tmux") -> list[str]:
    """The command that runs `argv` in a new window `name` of the user's own tmux (the server
    TMUX names, never a swarm's); -n also keeps tmux from renaming the window."""
    return [tmux, "new-window", "-n", name, "--", *argv]
