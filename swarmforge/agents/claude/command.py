"""claude's command lines: interactive and headless, with its `--settings` JSON.

    claude --append-system-prompt-file <file> --permission-mode acceptEdits
           -n "SwarmForge <Display>" --settings <hooks+helpers> [extra...] -- <text>
    claude -p --append-system-prompt-file <file> --permission-mode acceptEdits
           --settings <hooks+helpers> [extra...] -- <prompt>

The prompt file is SwarmForge's instruction file (`.swarmforge/prompts/<role>.md`)
and its text is given as the opening message. The `--` before the text keeps an
extra option that takes several values (`--allowedTools`) from swallowing it.
`--settings '<json>'` always carries the state hooks (hooks.py) and, unless the
role's `allow_helpers` setting is false, a JSON object allowing exactly the swarm's
helper scripts (`swarm_handoff.sh`, `ready_for_next.sh`, ... : `{"permissions":
{"allow": ["Bash(swarm_handoff.sh:*)", ...]}}`) so they run without an approval
prompt. Headless, a prompt too long for one argument is read from stdin, which
claude does when no prompt argument is given.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from swarmforge.agents.agent import Launch, title
from swarmforge.agents.claude.hooks import state_hooks
from swarmforge.layout import SCRIPTS

if TYPE_CHECKING:
    from swarmforge.config.roster import RoleSpec


def helper_settings() -> str:
    """claude's `--settings` JSON allowing exactly the swarm's helper scripts."""
    allow = [f"Bash({script}:*)" for script in SCRIPTS]
    return json.dumps({"permissions": {"allow": allow}})


def claude_settings(allow_helpers: bool) -> str:
    """claude's `--settings` JSON: the state hooks, and the helpers allowed if `allow_helpers`."""
    settings: dict[str, object] = {"hooks": state_hooks()}
    if allow_helpers:
        settings = json.loads(helper_settings()) | settings
    return json.dumps(settings)


def _settings(launch: Launch) -> list[str]:
    return ["--settings", claude_settings(launch.allow_helpers)]


def interactive_argv(role: RoleSpec, launch: Launch) -> list[str]:
    """The argv of an interactive claude for `role`."""
    return [
        "claude",
        "--append-system-prompt-file",
        launch.prompt_file,
        "--permission-mode",
        "acceptEdits",
        "-n",
        title(role),
        *_settings(launch),
        *role.extra_args,
        "--",
        launch.prompt_text,
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
