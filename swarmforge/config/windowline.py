"""One window line of swarmforge.conf, read into a `RoleSpec`.

`window-invisible` declares a role that runs like any other but gets no terminal
window. The optional fifth field is the receive mode (default `task`); every field
after it is an argument for the agent. A fifth field one edit away from `task` or
`batch` (`bacth`, `Batch`, `tasks`) is refused as a misspelt mode rather than passed
on; quoted (`"tasks"`) it is an argument.

Role and worktree names are single words of at most 64 bytes of UTF-8; a role name
also becomes a tmux session name, so it may not contain `.`, `:` or `#`, and a word of
command lines, so it may not start with `-` nor hold `$`, a backquote or `*?[]`
(`rolenames.py`).

Extra arguments: SwarmForge splits the line on whitespace and pastes the rest into
a shell command line, so the shell's quoting applies. We keep that meaning without a
shell: the rest of the line is split with POSIX `shlex` rules (quotes and
backslashes group words) into an argv list. Nothing is expanded (no `$VAR`, `~` or
globs), and an unquoted word starting with `#` is refused rather than read as a
trailing comment, because shells disagree on it.
"""

from __future__ import annotations

import re
import shlex

from pydantic import ValidationError

from swarmforge.config.role import EXEC, RECEIVE_MODES, ReceiveMode
from swarmforge.config.roster import RoleSpec
from swarmforge.errors import CorruptFile

DIRECTIVES = {"window": True, "window-invisible": False}  # directive -> visible
LINE_FORMAT = "window <role> <agent> <worktree> [task|batch] [extra args...]"

_HEAD = re.compile(r"(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(.*))?\Z", re.DOTALL)
_MODE = re.compile(r"(task|batch)(?:\s+(.*))?\Z", re.DOTALL)
# `window "my role" ...`: a role field that opens a quoted phrase, shown whole in the error.
_QUOTED_NAME = re.compile(r"\S+\s+((?:\"[^\"]*\"|'[^']*')\S*)")


def _bare_hash_word(text: str) -> bool:
    """True when a word starts with an unquoted, unescaped `#` (a shell would see a comment)."""
    quote = ""
    escaped = False
    at_word_start = True
    for char in text:
        if escaped:
            escaped, at_word_start = False, False
        elif quote:
            # Inside double quotes a backslash still escapes the next character.
            escaped = quote == '"' and char == "\\"
            quote = "" if char == quote and not escaped else quote
        elif char == "\\":
            escaped, at_word_start = True, False
        elif char in "'\"":
            quote, at_word_start = char, False
        elif char.isspace():
            at_word_start = True
        elif char == "#" and at_word_start:
            return True
        else:
            at_word_start = False
    return False


def _within_one_edit(word: str, mode: str) -> bool:
    """True if `word` is `mode`, or one insertion, deletion, substitution or swap away."""
    if abs(len(word) - len(mode)) > 1:
        return False
    if len(word) == len(mode):
        diff = [i for i, (a, b) in enumerate(zip(word, mode, strict=True)) if a != b]
        if len(diff) == 2 and diff[1] == diff[0] + 1:
            return word[diff[0]] == mode[diff[1]] and word[diff[1]] == mode[diff[0]]
        return len(diff) <= 1
    short, long = sorted((word, mode), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _check_mode_spelling(rest: str, exec_role: bool, path: str, number: int) -> None:
    """Refuse a first extra word that is almost, but not exactly, `task` or `batch`."""
    word = rest.split(None, 1)[0]
    # A quoted or escaped word is an argument on purpose; an option is never a mode.
    if word in RECEIVE_MODES or word.startswith("-") or any(c in "\\\"'" for c in word):
        return
    if any(_within_one_edit(word.lower(), mode) for mode in RECEIVE_MODES):
        meant = "the command" if exec_role else "meant for the agent"
        raise CorruptFile(
            path,
            number,
            f"'{word}' looks like a misspelt receive mode; write task or batch "
            f'(or quote it, "{word}", if it is {meant})',
        )


def _extra_args(rest: str, path: str, number: int) -> tuple[str, ...]:
    try:
        args = shlex.split(rest, comments=False, posix=True)
    except ValueError as exc:
        raise CorruptFile(path, number, f"extra arguments: {exc}") from None
    if _bare_hash_word(rest):
        raise CorruptFile(
            path, number, "a '#' comment must be on its own line (quote a literal '#')"
        )
    return tuple(args)


def role_from_line(line: str, path: str, number: int) -> RoleSpec:
    quoted = _QUOTED_NAME.match(line)
    if quoted and line.split(None, 1)[0] in DIRECTIVES:
        # Checked before counting fields: the words of a quoted name shift every later field.
        raise CorruptFile(
            path,
            number,
            f"quoted role name {quoted.group(1)}: role names cannot contain quotes or spaces",
        )
    head = _HEAD.match(line)
    if head is None:
        raise CorruptFile(path, number, f"expected '{LINE_FORMAT}', got: {line}")
    directive, name, agent, worktree, rest = head.groups()
    if directive not in DIRECTIVES:
        raise CorruptFile(
            path,
            number,
            f"Unknown config directive '{directive}' (expected window or window-invisible)",
        )
    mode: ReceiveMode = "task"
    if rest:
        found = _MODE.match(rest)
        if found:
            mode, rest = ("batch" if found.group(1) == "batch" else "task"), found.group(2)
        else:
            _check_mode_spelling(rest, agent.lower() == EXEC, path, number)
    args = _extra_args(rest, path, number) if rest else ()
    try:
        return RoleSpec(
            name=name,
            agent=agent,
            worktree=worktree,
            mode=mode,
            extra_args=args,
            visible=DIRECTIVES[directive],
            line=number,
        )
    except ValidationError as exc:
        raise CorruptFile(path, number, _first_problem(exc)) from None


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    cause = error.get("ctx", {}).get("error")
    return str(cause) if cause is not None else str(error["msg"])
