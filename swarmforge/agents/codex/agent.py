"""codex as an `Agent`: what swarmforge asks of it, answered from this folder's modules.

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
from swarmforge.agents.claude.hooks import session_of
from swarmforge.agents.codex import command
from swarmforge.agents.codex.hooks import from_codex

if TYPE_CHECKING:
    from swarmforge.agents.homes import Blocker, Env
    from swarmforge.agents.tokens import Tokens
    from swarmforge.config.roster import RoleSpec


class Codex(Agent):
    """OpenAI's codex: interactive or `codex exec`, hooks and notify, config.toml, rollouts."""

    headless = True
    loops = True
    trusts = True
    env_vars = ("OPENAI_*", "CODEX_*")
    # Its status line in the middle of a turn: "• Working (4s • esc to interrupt)"; only
    # with activity does it count as work, since a frozen screen keeps showing it.
    working_markers = ("esc to interrupt",)

    def __init__(self) -> None:
        super().__init__("codex")

    def prepare(self, helpers_dir: str, path: str | None) -> None:
        from swarmforge.agents.codex.sandbox import link_helper

        link_helper(helpers_dir, path)

    def argv(self, role: RoleSpec, launch: Launch) -> list[str]:
        return command.interactive_argv(role, launch)

    def resume_argv(self, role: RoleSpec, launch: Launch, conversation: str) -> list[str] | None:
        return command.interactive_argv(role, launch, resume=conversation)

    def conversation(self, payload: dict[str, object]) -> str | None:
        return session_of(payload)

    def keeps(self, env: Mapping[str, str], conversation: str) -> bool:
        from glob import escape as glob_escape  # not on the hooks' path

        # Its rollout: <codex home>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl
        pattern = f"sessions/*/*/*/rollout-*-{glob_escape(conversation)}.jsonl"
        return any(_codex_home(env).glob(pattern))

    def headless_argv(self, role: RoleSpec, launch: Launch, prompt: str | None) -> list[str]:
        return command.headless_argv(role, launch, prompt)

    def hint(self, payload: dict[str, object]) -> tuple[str, str] | None:
        return from_codex(payload)

    def tokens(self, env: Mapping[str, str], cwd: str, since: float) -> Tokens:
        from swarmforge.agents.codex.tokens import codex_tokens

        return codex_tokens(_codex_home(env), cwd, since)

    def config_path(self, env: Env) -> str:
        from swarmforge.agents.codex import trust

        return trust.codex_config_path(env)

    def blockers(self, project_root: str, env: Env) -> list[Blocker]:
        from swarmforge.agents.codex import trust

        return trust.blockers(project_root, env)

    def with_trust(self, path: str, data: bytes | None, key: str, env: Env) -> bytes | None:
        from swarmforge.agents.codex import trust

        return trust.with_trust(path, data, key)


def _codex_home(env: Mapping[str, str]) -> Path:
    """Where codex keeps its sessions: CODEX_HOME, or ~/.codex, of the role's env."""
    home = env.get("HOME") or os.path.expanduser("~")  # noqa: PTH111 - "~" where Path.home() raises
    return Path(env.get("CODEX_HOME") or Path(home, ".codex"))
