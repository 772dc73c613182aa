"""The `git` every role finds first on its PATH: a capture before a command that can
destroy work, and no command aimed at another role's worktree or branch.

`up` writes `.swarmforge/bin/git` (swarm/shims.py), a shell script that runs the
real git at once unless the command's verb is one of `GUARDED`; for those it runs
`swarmforge git-guard REAL_GIT ARGS...`, which is this module. It captures the
role's worktree (git/captures.py) unless the command only reads (`stash list`,
`branch` listing, ...), refuses what is aimed at another role, then replaces itself
with the real git. A capture that fails refuses the command: the work it would
destroy could not be kept.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from swarmforge import text
from swarmforge.errors import Refused, SwarmforgeError
from swarmforge.layout import STATE_DIR

# The verbs the shell script hands over; it runs every other one itself.
GUARDED = (
    "reset",
    "clean",
    "checkout",
    "restore",
    "switch",
    "stash",
    "rebase",
    "worktree",
    "branch",
)
# Global options that take the next word as their value (`git -C dir reset`).
VALUED = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env")
_READS = {
    "stash": {"list", "show"},
    "worktree": {"list", "add", "lock", "unlock", "repair"},
}
# Added to a stash of ignored files: everything but the checkout's view of swarm state.
KEEP_VIEW = f":(exclude,top){STATE_DIR}"
_BRANCH_WRITES = {"-d", "-D", "--delete", "-f", "--force", "-m", "-M", "--move", "-c", "-C"}


def split(args: list[str]) -> tuple[list[str], str, list[str]]:
    """`git`'s arguments as its global options, the verb, and the verb's arguments."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in VALUED:
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return args[:i], arg, args[i + 1 :]
    return args, "", []


def _directory(options: list[str]) -> str:
    """Where the command runs: the cwd as `-C` options change it."""
    here = Path.cwd()
    for i, arg in enumerate(options[:-1]):
        if arg == "-C":
            here = here / options[i + 1]
    return str(here)


def destroys(verb: str, rest: list[str]) -> bool:
    """True unless the command only reads (for `branch`: lists or creates; for `clean`: a
    dry run)."""
    if verb == "branch":
        return any(a in _BRANCH_WRITES or a.startswith(("--delete", "--move")) for a in rest)
    if verb == "clean":
        short = [a for a in rest if a.startswith("-") and not a.startswith("--")]
        return "--dry-run" not in rest and not any("n" in a for a in short)
    words = [a for a in rest if not a.startswith("-")]
    if verb in _READS and words and words[0] in _READS[verb]:
        return False
    return verb in GUARDED


def stashes_ignored(rest: list[str]) -> bool:
    """True for a `stash` (push) that takes ignored files too (`-a`, `--all`): it would take
    the checkout's `.swarmforge` view with it (statedir.py), which a pathspec leaves."""
    flags, words = [], []
    valued = False  # the word after `-m` is its message
    for arg in rest:
        if valued:
            valued = False
        elif arg == "--":
            break
        elif arg.startswith("-"):
            flags.append(arg)
            valued = arg in ("-m", "--message")
        else:
            words.append(arg)
    if words[:1] not in ([], ["push"]):
        return False  # list, pop, save (which takes no pathspec), ...
    short = [a for a in flags if not a.startswith("--")]
    return "--all" in flags or any("a" in a for a in short)


def aimed_elsewhere(here: str, top: str, branch: str, verb: str, rest: list[str]) -> str | None:
    """Why the command is refused, if it is aimed at another role's worktree or branch."""
    words = [a for a in rest if not a.startswith("-")]
    if verb == "worktree" and words[:1] in (["remove"], ["move"]) and len(words) > 1:
        target = os.path.realpath(Path(here, words[1]))
        if target != top:
            return f"{words[1]} is not this role's worktree ({top})"
    if verb == "branch" and destroys(verb, rest):
        for name in words:
            if name.startswith("swarm/") and name != branch:
                return f"{name} is not this role's branch ({branch or 'HEAD is detached'})"
    return None


def main(args: list[str]) -> int:
    """`swarmforge git-guard REAL_GIT ARGS...`: guard, capture, then become the real git."""
    if not args:
        raise SwarmforgeError("usage: swarmforge git-guard REAL_GIT [GIT ARGUMENTS...]")
    real, args = args[0], args[1:]
    options, verb, rest = split(args)
    role = os.environ.get("SWARMFORGE_ROLE", "")
    if role and verb in GUARDED and destroys(verb, rest):
        # The agent's own words, shown back to its terminal: escaped, and kept short.
        command = text.shown(" ".join(["git", verb, *rest]))[:200]
        _guard(role, _directory(options), verb, rest, command)
    if verb == "stash" and stashes_ignored(rest):
        args = [*args, *([] if "--" in rest else ["--"]), KEEP_VIEW]
    sys.stdout.flush()
    os.execv(real, [real, *args])
    return 0  # not reached


def _guard(role: str, here: str, verb: str, rest: list[str], command: str) -> None:
    from swarmforge.git import captures
    from swarmforge.git.command import run

    found = run(here, "rev-parse", "--show-toplevel", "--symbolic-full-name", "HEAD")
    lines = found.stdout.decode(errors="surrogateescape").splitlines()
    if not found.ok or not lines:
        return  # not in a checkout: git itself will say so, and there is nothing to keep
    top = os.path.realpath(lines[0])
    branch = lines[1].removeprefix("refs/heads/") if len(lines) > 1 else ""
    why = aimed_elsewhere(here, top, branch, verb, rest)
    if why is not None:
        raise Refused(f"swarmforge: `{command}` refused: {text.shown(why)}.")
    try:
        captures.take_logged(captures.main_top(top), role, top, command)
    except (SwarmforgeError, OSError) as exc:
        raise Refused(
            f"swarmforge: `{command}` refused: the work it could destroy was not captured ({exc})."
        ) from exc
    if verb == "stash" and rest[:1] in (["pop"], ["apply"]):
        _make_way_for_stashed_view(top, rest[1:])


def _make_way_for_stashed_view(top: str, rest: list[str]) -> None:
    """Before a stash made with `--all` without this guard is applied: it holds the
    checkout's `.swarmforge` view (a link), which git would refuse to restore over the
    view made again since ("already exists, no checkout"). The view is taken away for git
    to put back; a healer may still make it again first, so the guard's own stashes of
    ignored files leave the view out (`stashes_ignored`)."""
    from swarmforge import statedir
    from swarmforge.git.command import run

    stash = next((arg for arg in rest if not arg.startswith("-")), "stash@{0}")
    if not statedir.own_view(top):
        return
    if run(top, "rev-parse", "-q", "--verify", f"{stash}^3:{STATE_DIR}").ok:
        Path(top, STATE_DIR).unlink(missing_ok=True)
