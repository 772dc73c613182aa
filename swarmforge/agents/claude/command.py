"""claude's command lines: interactive and headless, with its `--settings` JSON.

    claude --append-system-prompt-file <file> --permission-mode acceptEdits
           -n "SwarmForge <Display>" --settings <hooks+helpers> [extra...] -- <text>
    claude -p --append-system-prompt-file <file> --permission-mode acceptEdits
           --settings <hooks+helpers> [extra...] -- <prompt>

The prompt file is SwarmForge's instruction file (`.swarmforge/prompts/<role>.md`)
and its text is given as the opening message. The `--` before the text keeps an
extra option that takes several values (`--allowedTools`) from swallowing it.
`--settings '<json>'` always carries the state hooks (hooks.py); unless the role's
`allow_helpers` setting is false, a rule allowing exactly the swarm's helper scripts
(`swarm_handoff.sh`, `ready_for_next.sh`, ... : `{"permissions": {"allow":
["Bash(swarm_handoff.sh:*)", ...]}}`) so they run without an approval prompt; and,
unless the role opts out with `sandbox = false`, claude's own sandbox for its shell
commands (bubblewrap on Linux), fitted to the role's worktree:

    {"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true,
                 "allowUnsandboxedCommands": false,
                 "filesystem": {"allowWrite": [<git dirs a commit writes>, <temp dir>]}}}

Inside it a command runs without asking, its writes limited to the worktree (claude's
default), the git directories a commit, merge or rebase there writes, and the role's
own temporary directory. A command the box refuses fails instead of asking to run
outside it. Where the box cannot start (no bubblewrap), claude says so and goes back
to asking before each command: never to running them unasked. Headless, a prompt too
long for one argument is read from stdin, which claude does when no prompt argument is
given.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge.agents.agent import Launch, title
from swarmforge.agents.claude.hooks import state_hooks
from swarmforge.agents.conversation import RESUMED
from swarmforge.agents.sandbox import fit
from swarmforge.layout import SCRIPTS

if TYPE_CHECKING:
    from swarmforge.config.roster import RoleSpec


MESSAGING = "--messaging-socket-path"
INBOX = "inbox.sock"  # in the role's temporary directory, a path short enough for a socket

# What in a role's own arguments takes claude out of its sandbox's rules.
BYPASS = ("--dangerously-skip-permissions", "--allow-dangerously-skip-permissions")
BYPASS_MODE = "bypassPermissions"


def bypasses(extra_args: Sequence[str]) -> list[str]:
    """The arguments among `extra_args` that let claude run anything without asking."""
    found = [arg for arg in extra_args if arg.split("=", 1)[0] in BYPASS]
    return found + [arg for arg in extra_args if arg.endswith(BYPASS_MODE)]


def helper_settings() -> str:
    """claude's `--settings` JSON allowing exactly the swarm's helper scripts."""
    allow = [f"Bash({script}:*)" for script in SCRIPTS]
    return json.dumps({"permissions": {"allow": allow}})


def sandbox_settings(worktree: str, temp_dir: str) -> dict[str, object]:
    """claude's `sandbox` settings for a role working in `worktree` with its own `temp_dir`.
    (claude lets a role in the main checkout write its `.git` but for the hooks and
    config; the fit's read-only paths add the other roles' worktrees.)"""
    box = fit(worktree, temp_dir)
    filesystem = {"allowWrite": box.writable}
    if box.read_only:
        filesystem["denyWrite"] = box.read_only
    return {
        "enabled": True,
        "autoAllowBashIfSandboxed": True,
        "allowUnsandboxedCommands": False,
        "filesystem": filesystem,
    }


def claude_settings(allow_helpers: bool, sandbox: dict[str, object] | None = None) -> str:
    """claude's `--settings` JSON: the state hooks, the helpers allowed if `allow_helpers`,
    and `sandbox` settings if given."""
    settings: dict[str, object] = {"hooks": state_hooks()}
    if allow_helpers:
        settings = json.loads(helper_settings()) | settings
    if sandbox is not None:
        settings["sandbox"] = sandbox
    return json.dumps(settings)


def launch_settings(launch: Launch) -> str:
    """The `--settings` JSON of a claude started with `launch`."""
    box = sandbox_settings(launch.worktree_path, launch.temp_dir) if launch.sandbox else None
    return claude_settings(launch.allow_helpers, box)


def _settings(launch: Launch) -> list[str]:
    return ["--settings", launch_settings(launch)]


def inbox_path(temp_dir: str) -> str:
    """Where an interactive claude started with `temp_dir` listens for messages."""
    return str(Path(temp_dir, INBOX))


def _inbox(role: RoleSpec, launch: Launch) -> list[str]:
    """claude's cross-session messaging socket, at a path swarmforge knows (agents/inbox.py),
    unless the role's own arguments choose one."""
    if not launch.temp_dir or any(a.startswith(MESSAGING) for a in role.extra_args):
        return []
    return [MESSAGING, inbox_path(launch.temp_dir)]


def interactive_argv(role: RoleSpec, launch: Launch, resume: str | None = None) -> list[str]:
    """The argv of an interactive claude for `role`; with `resume`, in that session of its
    own again (conversation.py)."""
    return [
        "claude",
        *(["--resume", resume] if resume else []),
        "--append-system-prompt-file",
        launch.prompt_file,
        "--permission-mode",
        "acceptEdits",
        "-n",
        title(role),
        *_settings(launch),
        *_inbox(role, launch),
        *role.extra_args,
        "--",
        RESUMED if resume else launch.prompt_text,
    ]


def headless_argv(role: RoleSpec, launch: Launch, prompt: str | None) -> list[str]:
    """The argv of `claude -p` for `role`; a None `prompt` is read from stdin."""
    system = ["--append-system-prompt-file", launch.prompt_file] if launch.prompt_file else []
    return [
        "claude",
        "-p",
        *system,
        "--permission-mode",
        "acceptEdits",
        *_settings(launch),
        *role.extra_args,
        # After `--`, a prompt is never taken for an option or an option's value.
        *(["--", prompt] if prompt is not None else []),
    ]
