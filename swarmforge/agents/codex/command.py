"""codex's command lines: interactive and headless (`codex exec`).

    codex -C <worktree> -c allow_login_shell=false -c notify=[...] -c hooks={...}
          [extra...] -- <text>
    codex exec -C <worktree> -c allow_login_shell=false [extra...] -- <prompt>

The `--` before the text keeps an extra option that takes several values (`-i`)
from swallowing it. `-c allow_login_shell=false` runs it unattended: codex runs
shell commands through a login shell, and a login shell's profile may reset PATH
and hide the helpers. An interactive codex also gets
`-c notify=["swarmforge", "agent-state", "--agent", "codex"]`, which codex runs with
a JSON argument when a turn ends, and its state hooks (hooks.py). Headless, a prompt
too long for one argument is read from stdin, which codex does when the prompt
argument is `-`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.agents.agent import Launch
from swarmforge.agents.codex.hooks import state_hook_args
from swarmforge.agents.codex.sandbox import make_mount_points, sandbox_args
from swarmforge.agents.conversation import RESUMED

if TYPE_CHECKING:
    from swarmforge.config.roster import RoleSpec

CODEX_SHELL = ("-c", "allow_login_shell=false")
# How codex tells swarmforge its state: its notify program at the end of each turn, and
# its hooks (trusted one by one, see hooks.state_hook_args) at every step of a turn.
CODEX_REPORTS = (
    "-c",
    'notify=["swarmforge", "agent-state", "--agent", "codex"]',
    *state_hook_args(),
)


def _sandbox(role: RoleSpec, launch: Launch, *, interactive: bool) -> list[str]:
    """codex's sandbox options for `role` (none when it opts out with `sandbox = false`)."""
    if not launch.sandbox:
        return []
    make_mount_points(launch.worktree_path, launch.temp_dir)
    return sandbox_args(
        launch.worktree_path, launch.temp_dir, role.extra_args, interactive=interactive
    )


def interactive_argv(role: RoleSpec, launch: Launch, resume: str | None = None) -> list[str]:
    """The argv of an interactive codex for `role`; with `resume`, `codex resume` of that
    session of its own (conversation.py)."""
    return [
        "codex",
        *(["resume"] if resume else []),
        "-C",
        launch.worktree_path,
        *CODEX_SHELL,
        *CODEX_REPORTS,
        *_sandbox(role, launch, interactive=True),
        *role.extra_args,
        "--",
        *([resume, RESUMED] if resume else [launch.prompt_text]),
    ]


def headless_argv(role: RoleSpec, launch: Launch, prompt: str | None) -> list[str]:
    """The argv of `codex exec` for `role`; a None `prompt` is read from stdin."""
    return [
        "codex",
        "exec",
        "-C",
        launch.worktree_path,
        *CODEX_SHELL,
        *_sandbox(role, launch, interactive=False),
        *role.extra_args,
        "--",
        "-" if prompt is None else prompt,
    ]
