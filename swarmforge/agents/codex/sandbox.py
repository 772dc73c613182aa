"""codex's own sandbox, fitted to a role's worktree: what it may write, and its helper.

codex runs each shell command of a `workspace-write` session inside bubblewrap, where
the worktree is writable and git's directories are not, so `git commit` fails there
("index.lock: Read-only file system"). A role's codex is given, as extra writable
roots, exactly the git directories a commit, merge or rebase in its worktree writes:
the worktree's own git directory (`.git/worktrees/<name>`: its index, HEAD and logs)
and the common directory's `objects`, `refs` and `logs`; never `hooks/` or `config`
(agents/sandbox.py, shared with claude's box). Its approval policy is `never`: what
the box allows runs without a prompt, and what it does not fails instead of waiting
for a person.

Where Debian's `bwrap` is installed, codex runs it with `codex-linux-sandbox` as the
program inside, looked up on PATH, and the npm package installs no program of that
name (codex tells the two apart by the name it is started as). `link_helper` puts one
in the helpers' directory, first on every role's PATH.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from swarmforge.agents.sandbox import writable
from swarmforge.proc import spawn

HELPER = "codex-linux-sandbox"
# The flags with which a role's own arguments choose codex's sandbox, or its approvals.
BYPASS = ("--dangerously-bypass-approvals-and-sandbox", "--yolo", "--full-auto")
OWN_SANDBOX = ("-s", "--sandbox", *BYPASS)
OWN_APPROVALS = ("-a", "--ask-for-approval", *BYPASS)


def _chooses(extra_args: Sequence[str], flags: tuple[str, ...]) -> bool:
    return any(arg.split("=", 1)[0] in flags for arg in extra_args)


def sandbox_args(
    worktree: str, temp_dir: str, extra_args: Sequence[str], *, interactive: bool
) -> list[str]:
    """The options that run a role's codex in its sandbox, fitted to `worktree` and its own
    `temp_dir` (not /tmp, which other roles and the user share), and without approval
    prompts (`codex exec` never asks); each left out where the role's own arguments
    (`extra_args`) choose it."""
    args = []
    if not _chooses(extra_args, OWN_SANDBOX):
        roots = ", ".join(f'"{root}"' for root in writable(worktree, temp_dir))
        args += ["--sandbox", "workspace-write"]
        args += ["-c", f"sandbox_workspace_write.writable_roots=[{roots}]"]
        args += ["-c", "sandbox_workspace_write.exclude_slash_tmp=true"]
        args += ["-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true"]
    if interactive and not _chooses(extra_args, OWN_APPROVALS):
        args += ["--ask-for-approval", "never"]
    return args


def native_binary(path: str | None) -> str | None:
    """codex's own program behind the `codex` found on `path` (npm installs a node script
    that starts it), or None."""
    found = spawn.which("codex", path)
    if found is None:
        return None
    real = Path(os.path.realpath(found))
    try:
        with real.open("rb") as f:
            if f.read(4) == b"\x7fELF":
                return str(real)
    except OSError:
        return None
    # npm: <node_modules>/@openai/codex/bin/codex.js, the program in a platform package.
    # (`[!.]*`: any name but a hidden one, as in a shell.)
    package = real.parent.parent
    candidates = [
        *package.glob("vendor/[!.]*/bin/codex"),
        *package.parent.glob("codex-*/vendor/[!.]*/bin/codex"),
    ]
    # Sorted as strings: a platform package's "codex-linux-x64/..." before "codex/...".
    return next((str(c) for c in sorted(candidates, key=str) if os.access(c, os.X_OK)), None)


def link_helper(directory: str, path: str | None) -> None:
    """Put `codex-linux-sandbox` (codex's program under that name) into `directory`, if the
    codex found on `path` has one to link to."""
    target = native_binary(path)
    if target is None or not Path(directory).is_dir():
        return
    link = Path(directory, HELPER)
    staged = Path(directory, f"{HELPER}.{os.getpid()}.tmp")
    try:
        staged.symlink_to(target)
        staged.replace(link)
    except OSError:
        if os.path.lexists(staged):
            staged.unlink()
        raise
