"""A session to start on a swarm's tmux server, and the checks and escapes that bring its
name, command and environment to tmux unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from swarmforge.errors import SwarmforgeError
from swarmforge.rolenames import SESSION_UNSAFE_CHARS

# tmux rewrites '.' and ':' in session names and expands '#' formats in them, so a
# name with one of these would not be found again under the name it was given.
NAME_FORBIDDEN = SESSION_UNSAFE_CHARS


@dataclass(frozen=True)
class SessionSpec:
    """One session to start: its name, directory, command and environment."""

    name: str
    cwd: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    log: str | None = None  # a file that keeps everything the pane shows


def argument(value: str) -> str:
    """`value` as one tmux command argument that arrives unchanged."""
    # tmux ends a command at an argument ending in ';' and reads a final '\;' as ';'.
    return value[:-1] + "\\;" if value.endswith(";") else value


def command_argv(argv: list[str]) -> list[str]:
    """`argv` in a form tmux executes directly."""
    # tmux hands a lone argument to the user's shell, which would split and expand it;
    # POSIX sh given the name as "$0" runs it verbatim, and exec keeps the pane's pid.
    return ["/bin/sh", "-c", 'exec "$0"', argv[0]] if len(argv) == 1 else list(argv)


def check(name: str, argv: list[str], env: dict[str, str]) -> None:
    """Refuse what tmux would silently alter or misread."""
    if not name or any(c in NAME_FORBIDDEN for c in name):
        raise SwarmforgeError(
            f"Invalid tmux session name {name!r}.",
            hint=f"Use a non-empty name without any of {NAME_FORBIDDEN!r}.",
        )
    if not argv:
        raise SwarmforgeError(f"No command given for tmux session '{name}'.")
    for key in env:
        if not key or "=" in key:
            raise SwarmforgeError(f"Invalid environment variable name {key!r} for '{name}'.")
