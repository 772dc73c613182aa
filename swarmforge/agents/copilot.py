"""copilot, GitHub's agent CLI: its command line.

    copilot -C <worktree> --name "SwarmForge <Display>" [extra...] -i <text>

With the headless backend it is started the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.agents.agent import Agent, Launch, title

if TYPE_CHECKING:
    from swarmforge.config.roster import RoleSpec


class Copilot(Agent):
    """GitHub's copilot: an interactive agent, its worktree and title on its command line."""

    # It signs in with a GitHub token (COPILOT_GITHUB_TOKEN, else GH_TOKEN, else GITHUB_TOKEN).
    env_vars = ("COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN")

    def __init__(self) -> None:
        super().__init__("copilot")

    def argv(self, role: RoleSpec, launch: Launch) -> list[str]:
        return [
            "copilot",
            "-C",
            launch.worktree_path,
            "--name",
            title(role),
            *role.extra_args,
            "-i",
            launch.prompt_text,
        ]
