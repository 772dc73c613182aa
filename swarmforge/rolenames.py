"""What a role's name may be: the characters and length that keep it one file, branch and
tmux session name and one plain word of a command line, and how a name is shown in a message.
"""

from __future__ import annotations

BAD_ROLE_CHARS = frozenset("_/\\")
# A role's tmux session is `swarmforge-<role>`, and tmux rewrites '.' and ':' in
# session names and expands '#' formats in them: the session would not be found again.
SESSION_UNSAFE_CHARS = ".:#"
QUOTES = frozenset("\"'")
# A name is an argument of commands and a word of lines shown for a person to paste:
# a shell expands or acts on these there, and a leading '-' makes it an option.
SHELL_EXPANDED_CHARS = "$`*?[];|&<>(){}~!"
SHELL_SHOWN = (
    ", ".join(f"'{c}'" for c in SHELL_EXPANDED_CHARS[:-1]) + f" or '{SHELL_EXPANDED_CHARS[-1]}'"
)
# The name becomes part of file names (prompts, logs, handoffs), branch and session
# names; well under the 255 bytes a file name may have, with room for what surrounds it.
MAX_NAME_BYTES = 64


def shown_name(name: str) -> str:
    """`name` quoted for a message, shortened when it is too long to read."""
    return f"'{name}'" if len(name) <= 40 else f"'{name[:32]}...' ({len(name)} characters)"


def name_too_long(name: str) -> bool:
    """True when `name` is longer than a role or worktree name may be."""
    return len(name.encode("utf-8")) > MAX_NAME_BYTES


NAME_LIMIT = f"at most {MAX_NAME_BYTES} characters ({MAX_NAME_BYTES} bytes of UTF-8)"


def role_name_problem(name: str) -> str | None:
    """Why `name` cannot be a role name, or None."""
    if not name:
        return "role name is empty"
    if any(c in QUOTES or c.isspace() for c in name):
        return f"role name {shown_name(name)}: role names cannot contain quotes or spaces"
    if any(c in BAD_ROLE_CHARS or not c.isprintable() for c in name):
        return f"role name '{name}' may not contain '_', '/', whitespace or control characters"
    if any(c in SESSION_UNSAFE_CHARS for c in name):
        return (
            f"role name {shown_name(name)} may not contain '.', ':' or '#' "
            f"(tmux would rename its session swarmforge-{name})"
        )
    if name.startswith("-"):
        return (
            f"role name {shown_name(name)} may not start with '-' "
            "(a command would read it as an option)"
        )
    if any(c in SHELL_EXPANDED_CHARS for c in name):
        return (
            f"role name {shown_name(name)} may not contain {SHELL_SHOWN} "
            "(a shell would expand or act on them)"
        )
    if name_too_long(name):
        return f"role name {shown_name(name)} is too long: {NAME_LIMIT}"
    return None
