"""codex's own sandbox, fitted to a role's worktree: what it may write, and its helper.

codex runs each shell command inside bubblewrap, with what its permission profile
allows. swarmforge gives each codex role a profile of its own (`-c
default_permissions="swarmforge"` and that profile's filesystem rules): everything
readable, and writable only the role's worktree, the git directories a commit, merge
or rebase there writes (agents/sandbox.py, shared with claude's box), and the role's
temporary directory. codex itself keeps a `.git`, `.codex` and `.agents` directly under
a writable path read-only. In a linked worktree the git directories are the worktree's
own (`.git/worktrees/<name>`: its index, HEAD and logs) and the common directory's
`objects`, `refs` and `logs`. In the main checkout a commit writes `.git` itself, so
`.git` is made writable there, with what `sandbox.fit` keeps read-only (its hooks and
config, the other roles' worktrees) still read-only.

A profile given on the command line wins over a `sandbox_mode` in the user's or a
repository's codex configuration (codex 0.171), so neither can switch the box off. Its
approval policy is `never`: what the box allows runs without a prompt, and what it does
not fails instead of waiting for a person.

Where Debian's `bwrap` is installed, codex runs it with `codex-linux-sandbox` as the
program inside, looked up on PATH, and the npm package installs no program of that
name (codex tells the two apart by the name it is started as). `link_helper` puts one
in the helpers' directory, first on every role's PATH.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from swarmforge.agents.sandbox import fit
from swarmforge.proc import spawn

HELPER = "codex-linux-sandbox"
PROFILE = "swarmforge"
# The flags with which a role's own arguments choose codex's sandbox, or its approvals.
BYPASS = ("--dangerously-bypass-approvals-and-sandbox", "--yolo", "--full-auto")
OWN_SANDBOX = ("-s", "--sandbox", *BYPASS)
OWN_APPROVALS = ("-a", "--ask-for-approval", *BYPASS)


def _chooses(extra_args: Sequence[str], flags: tuple[str, ...]) -> bool:
    return any(arg.split("=", 1)[0] in flags for arg in extra_args)


def filesystem(worktree: str, temp_dir: str) -> dict[str, str]:
    """The filesystem rules of codex's profile for a role in `worktree` with its own
    `temp_dir`: each path's access, a rule for a path inside another one winning."""
    box = fit(worktree, temp_dir)
    access = {"/": "read", worktree: "write"}
    access.update(dict.fromkeys(box.writable, "write"))
    if box.main_git is not None:
        access[box.main_git] = "write"
    access.update(dict.fromkeys(box.read_only, "read"))
    return access


# What codex keeps read-only directly under each writable path (0.171). Where one is
# missing, its bubblewrap makes an empty directory there to mount over, on the host;
# two sandboxes starting at once (a role's command and its file helper, or two roles
# sharing `.git/objects`) then race on it, and one fails with "bwrap: Can't remount
# readonly on .../.codex: Unable to find ... in mount table".
MASKED = (".agents", ".aws", ".codex", ".git")


def make_mount_points(worktree: str, temp_dir: str) -> None:
    """Make, before codex starts, what its bubblewrap would otherwise make on its first
    command, so that no two sandboxes race to make it: the empty directories under each
    writable path (`MASKED`), and each read-only path of the profile that does not exist
    yet (`.worktrees/` and `.git/worktrees/` before a first worktree; codex would put an
    empty read-only file there, where git and `up` need a directory)."""
    for path, access in filesystem(worktree, temp_dir).items():
        if path == "/":
            continue
        if access == "read":
            wanted = [Path(path)]
        elif Path(path).is_dir():
            wanted = [Path(path, name) for name in MASKED]
        else:
            continue
        for directory in wanted:
            try:
                directory.mkdir(exist_ok=True)
            except OSError:
                continue  # a file of that name, or no right to: codex copes as before


def sandbox_args(
    worktree: str, temp_dir: str, extra_args: Sequence[str], *, interactive: bool
) -> list[str]:
    """The options that run a role's codex in its sandbox, fitted to `worktree` and its own
    `temp_dir` (not /tmp, which other roles and the user share), and without approval
    prompts (`codex exec` never asks); each left out where the role's own arguments
    (`extra_args`) choose it."""
    args = []
    if not _chooses(extra_args, OWN_SANDBOX):
        # TOML's basic strings read JSON's escapes: a path with a quote stays one key.
        rules = ", ".join(
            f"{json.dumps(path)} = {json.dumps(access)}"
            for path, access in filesystem(worktree, temp_dir).items()
        )
        args += ["-c", f'default_permissions="{PROFILE}"']
        args += ["-c", f"permissions.{PROFILE}.filesystem={{{rules}}}"]
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
