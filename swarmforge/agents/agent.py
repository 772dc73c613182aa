"""What every agent CLI is asked for: `Agent`, with the answers for one swarmforge knows nothing of.

Each agent CLI swarmforge knows is a subclass in its own module or folder (`claude/`,
`codex/`, `copilot.py`, `grok.py`, `execagent.py`); `registry.py` finds it by name.
Any other agent is a command looked up on PATH and started as
`<agent> [extra...] <text>`: the prompt is its last positional argument. With the
headless backend such an agent is started the same way.

With the headless backend, an agent with a non-interactive mode (claude, codex) runs
the per-item loop (see swarm/execrole/), once per task or batch; the prompt is the
instruction text, a note that the item is completed when the agent exits, then the
ready printout. A prompt too long for one argument (Linux caps one at 128 KiB) is
given on stdin instead; otherwise stdin is empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swarmforge.agents.homes import Blocker, Env
    from swarmforge.agents.tokens import Tokens
    from swarmforge.config.roster import RoleSpec

# Linux refuses a single argument longer than 32 pages (MAX_ARG_STRLEN); stay well below.
MAX_PROMPT_ARG = 100_000
HEADLESS_NOTE = (
    "The swarm has accepted the work below for you: do it, then end. It is completed "
    "when you exit, so do not run ready_for_next.sh or done_with_current.sh.\n"
)


@dataclass(frozen=True)
class Launch:
    """What an agent is started with: where it works, its opening prompt, its settings."""

    worktree_path: str
    prompt_file: str
    prompt_text: str
    allow_helpers: bool = True
    sandbox: bool = True  # run in the agent's own sandbox, fitted to the worktree
    temp_dir: str = ""  # its own temporary directory (its TMPDIR), writable in the sandbox


@dataclass(frozen=True)
class Invocation:
    """One run of a role's command for one task or batch: its argv and its stdin."""

    argv: list[str]
    stdin: bytes


def title(role: RoleSpec) -> str:
    """The name an agent shows for its session of `role`."""
    return f"SwarmForge {role.display_name}"


def headless_prompt(launch: Launch, printout: str) -> str:
    """The prompt of a headless agent for one item: its instructions, then the ready printout."""
    return f"{launch.prompt_text}\n{HEADLESS_NOTE}\n{printout}"


class Agent:
    """One agent CLI: how it is started, and what swarmforge can read of it.

    As it is, an agent swarmforge knows nothing particular of: started as
    `<agent> [extra...] <text>`, with no headless mode, hooks, trust file or tokens.
    """

    headless = False  # it has a non-interactive mode the per-item loop drives
    loops = False  # with the headless backend, its roles run the per-item loop
    trusts = False  # it keeps a trust and first-run file swarmforge can check and edit
    # What its screen's status line shows throughout a turn; () when it shows none known.
    working_markers: tuple[str, ...] = ()
    # The variables its own CLI reads (names, or prefixes ending in `*`), passed on to it
    # from the environment `up` runs in; see environment.py.
    env_vars: tuple[str, ...] = ()

    def __init__(self, name: str) -> None:
        self.name = name

    def prepare(self, helpers_dir: str, path: str | None) -> None:
        """Put what the agent needs on its PATH into `helpers_dir` (the swarm's helper
        scripts' directory, first on every role's PATH), finding it on `path`; by default
        nothing."""

    def inbox(self, temp_dir: str) -> str | None:
        """The Unix socket through which the agent, started with `temp_dir` as its own
        temporary directory, takes a message as its next turn without a keystroke (see
        agents/inbox.py); None if it has none."""
        return None

    def argv(self, role: RoleSpec, launch: Launch) -> list[str]:
        """The argv that starts the agent of `role`."""
        return [role.agent, *role.extra_args, launch.prompt_text]

    def resume_argv(self, role: RoleSpec, launch: Launch, conversation: str) -> list[str] | None:
        """The argv that starts the agent of `role` again in its own session `conversation`
        (agents/conversation.py), told that the swarm started again; None: it cannot."""
        return None

    def conversation(self, payload: dict[str, object]) -> str | None:
        """The id of its own session that its hook's JSON names, or None."""
        return None

    def keeps(self, env: Mapping[str, str], conversation: str) -> bool:
        """Whether its session `conversation` is still on disk, for it to resume."""
        return False

    def headless_argv(self, role: RoleSpec, launch: Launch, prompt: str | None) -> list[str]:
        """The argv of its non-interactive mode; a None `prompt` is read from stdin."""
        raise NotImplementedError(self.name)

    def invocation(self, role: RoleSpec, launch: Launch, printout: str) -> Invocation:
        """How `role` is run for one task or batch whose ready printout is `printout`."""
        prompt = headless_prompt(launch, printout)
        data = prompt.encode()
        if len(data) > MAX_PROMPT_ARG:
            return Invocation(self.headless_argv(role, launch, None), data)
        return Invocation(self.headless_argv(role, launch, prompt), b"")

    def hint(self, payload: dict[str, object]) -> tuple[str, str] | None:
        """The state and source its hook's or notify program's JSON says, or None."""
        return None

    def tokens(self, env: Mapping[str, str], cwd: str, since: float) -> Tokens | None:
        """What it spent working in `cwd` since `since` (a Unix time); None: not known."""
        return None

    def config_path(self, env: Env) -> str:
        """The file it keeps its trust and first-run answers in (only if `trusts`)."""
        raise NotImplementedError(self.name)

    def blockers(self, project_root: str, env: Env) -> list[Blocker]:
        """What would stop it from starting unattended in the project (only if `trusts`)."""
        raise NotImplementedError(self.name)

    def with_trust(self, path: str, data: bytes | None, key: str, env: Env) -> bytes | None:
        """Its file `data` of `path` with `key` trusted; None when nothing changes."""
        raise NotImplementedError(self.name)
