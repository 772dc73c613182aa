"""grok: its command line, and the permission mode its extra arguments ask for.

    grok --cwd <worktree> --permission-mode acceptEdits|bypassPermissions [extra...]
         --rules <text> --verbatim <text>

grok gets `bypassPermissions` when the extra arguments ask for full autonomy
(`--yolo`, `--always-approve` or `--permission-mode bypassPermissions`). With the
headless backend it is started the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from swarmforge.agents.agent import Agent, Launch

if TYPE_CHECKING:
    from swarmforge.config.roster import RoleSpec

AUTO_APPROVE_FLAGS = frozenset({"--yolo", "--always-approve"})


def grok_permission_mode(extra_args: Sequence[str]) -> str:
    """The permission mode SwarmForge gives grok for these extra arguments."""
    for index, arg in enumerate(extra_args):
        if arg in AUTO_APPROVE_FLAGS:
            return "bypassPermissions"
        following = extra_args[index + 1 : index + 2]
        if arg == "--permission-mode" and list(following) == ["bypassPermissions"]:
            return "bypassPermissions"
    return "acceptEdits"


class Grok(Agent):
    """grok: an interactive agent, its prompt given both as rules and as the first message."""

    env_vars = ("GROK_*", "XAI_*")

    def __init__(self) -> None:
        super().__init__("grok")

    def argv(self, role: RoleSpec, launch: Launch) -> list[str]:
        return [
            "grok",
            "--cwd",
            launch.worktree_path,
            "--permission-mode",
            grok_permission_mode(role.extra_args),
            *role.extra_args,
            "--rules",
            launch.prompt_text,
            "--verbatim",
            launch.prompt_text,
        ]
