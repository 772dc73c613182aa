"""claude as an `Agent`: what swarmforge asks of it, answered from this folder's modules.

Its trust file and its session files are read by modules imported when first asked
for: the registry is on the path of every hook call (`swarmforge agent-state`), which
must stay quick, so it loads no TOML, date or glob module it does not use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge.agents.agent import Agent, Launch
from swarmforge.agents.claude import command
from swarmforge.agents.claude.hooks import from_claude, session_of

if TYPE_CHECKING:
    from swarmforge.agents.homes import Blocker, Env
    from swarmforge.agents.tokens import Tokens
    from swarmforge.config.roster import RoleSpec


class Claude(Agent):
    """Anthropic's claude: interactive or `claude -p`, hooks, `.claude.json`, transcripts."""

    headless = True
    loops = True
    trusts = True
    env_vars = ("ANTHROPIC_*", "CLAUDE_*")

    def __init__(self) -> None:
        super().__init__("claude")

    def inbox(self, temp_dir: str) -> str | None:
        return command.inbox_path(temp_dir)

    def argv(self, role: RoleSpec, launch: Launch) -> list[str]:
        return command.interactive_argv(role, launch)

    def resume_argv(self, role: RoleSpec, launch: Launch, conversation: str) -> list[str] | None:
        return command.interactive_argv(role, launch, resume=conversation)

    def conversation(self, payload: dict[str, object]) -> str | None:
        return session_of(payload)

    def keeps(self, env: Mapping[str, str], conversation: str) -> bool:
        from glob import escape as glob_escape  # not on the hooks' path

        # Its transcript: <config dir>/projects/<the worktree, its / as ->/<id>.jsonl
        return any(_claude_dir(env).glob(f"projects/*/{glob_escape(conversation)}.jsonl"))

    def headless_argv(self, role: RoleSpec, launch: Launch, prompt: str | None) -> list[str]:
        return command.headless_argv(role, launch, prompt)

    def hint(self, payload: dict[str, object]) -> tuple[str, str] | None:
        return from_claude(payload)

    def tokens(self, env: Mapping[str, str], cwd: str, since: float) -> Tokens:
        from swarmforge.agents.claude.tokens import claude_tokens

        return claude_tokens(_claude_dir(env), cwd, since)

    def config_path(self, env: Env) -> str:
        from swarmforge.agents.claude import trust

        return trust.claude_config_path(env)

    def blockers(self, project_root: str, env: Env) -> list[Blocker]:
        from swarmforge.agents.claude import trust

        return trust.blockers(project_root, env)

    def with_trust(self, path: str, data: bytes | None, key: str, env: Env) -> bytes | None:
        from swarmforge.agents.claude import trust

        # claude also asks before it uses an API key: approve the one it will see.
        return trust.with_trust(path, data, key, env.get("ANTHROPIC_API_KEY", ""))


def _claude_dir(env: Mapping[str, str]) -> Path:
    """Where claude keeps its sessions: CLAUDE_CONFIG_DIR, or ~/.claude, of the role's env."""
    home = env.get("HOME") or os.path.expanduser("~")  # noqa: PTH111 - "~" where Path.home() raises
    return Path(env.get("CLAUDE_CONFIG_DIR") or Path(home, ".claude"))
