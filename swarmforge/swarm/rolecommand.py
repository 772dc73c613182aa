"""What runs a role: its command line, for either backend."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from swarmforge import filewrite, statedir
from swarmforge.agents import commands, conversation
from swarmforge.agents.agent import Launch
from swarmforge.agents.environment import agent_env
from swarmforge.agents.registry import agent
from swarmforge.config import prompts, rolerecord, sessionrecord
from swarmforge.config.conf import role_prompt_path
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.roster import CONSTITUTION_FILE, SwarmConfig
from swarmforge.config.settings import Settings, load_settings
from swarmforge.errors import SwarmforgeError
from swarmforge.git.command import run as run_git
from swarmforge.layout import BIN_DIR
from swarmforge.swarm import placement
from swarmforge.tempdirs import temp_dir


def write_instructions(root: str, config: SwarmConfig) -> None:
    """Write each agent role's opening instruction file (under `.swarmforge/`, untracked)."""
    for role in config.roles:
        if not role.is_exec:
            path = prompts.instruction_path(root, role.name)
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            filewrite.atomic_write(
                path, prompts.instruction_text(role.name).encode(), durable=False
            )


def instruction_files(root: str, role: str) -> list[str]:
    """What an agent of `role` is told to read, relative to its worktree."""
    articles = prompts.article_names(str(Path(root, prompts.ARTICLES_DIR)))
    return [
        CONSTITUTION_FILE,
        *(str(Path(prompts.ARTICLES_DIR, name)) for name in articles),
        os.path.relpath(role_prompt_path(root, role), root),
    ]


def _committed(root: str, paths: list[str]) -> set[str]:
    """Which of `paths` the main checkout's HEAD holds (a new worktree starts from it)."""
    listed = run_git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", *paths)
    return set(listed.stdout.decode(errors="replace").splitlines()) if listed.ok else set()


def check_instructions(root: str, roles: list[RoleRecord]) -> None:
    """Refuse to start a worktree role whose worktree would lack what it is told to read.

    A new worktree is a checkout of HEAD, so a `swarmforge/` that was never
    committed is not in it; an existing worktree is looked at as it is.
    """
    missing: dict[str, list[str]] = {}
    for role in roles:
        if role.is_exec or role.in_main_checkout:
            continue
        wanted = instruction_files(root, role.name)
        if Path(role.path).is_dir():
            have = {p for p in wanted if Path(role.path, p).is_file()}
        else:
            have = _committed(root, wanted)
        lacking = [p for p in wanted if p not in have]
        if lacking:
            missing[role.name] = lacking
    if not missing:
        return
    existing = [r.path for r in roles if r.name in missing and Path(r.path).is_dir()]
    hint = (
        "Commit them, then run `swarmforge up` again: "
        "git add swarmforge && git commit -m 'Add the swarm configuration'"
    )
    if existing:
        branch = placement.main_branch(root)
        hint += "; and bring them into the existing worktree(s): " + "; ".join(
            f"git -C {path} merge {branch}" for path in existing
        )
    raise SwarmforgeError(
        "Not starting: these roles would not find their instructions in their worktrees.",
        details=tuple(f"  {name}: {', '.join(paths)}" for name, paths in missing.items()),
        hint=hint,
    )


def launch(root: str, config: SwarmConfig, record: RoleRecord) -> Launch:
    """What the agent of role `record` is started with: worktree, instructions, settings."""
    settings = load_settings(root, config.names).role(record.name)
    return Launch(
        record.path,
        prompts.instruction_path(root, record.name),
        prompts.instruction_text(record.name),
        allow_helpers=settings.allow_helpers,
        sandbox=settings.sandbox,
        temp_dir=temp_dir(root, record.name),
    )


def run_backend(root: str) -> str:
    """The backend of the project's run (`tmux` when it has no session record)."""
    record = sessionrecord.load(root)
    return record.backend if record is not None else "tmux"


def command(
    root: str,
    config: SwarmConfig,
    record: RoleRecord,
    env: dict[str, str],
    backend: str | None = None,
) -> list[str]:
    """The argv that runs role `record`: its per-item loop, or its agent.

    `backend` (`tmux` or `headless`) defaults to the backend of the project's run
    record. Exec roles always run the loop; with the headless backend, claude and
    codex roles run it too, driving the agent's non-interactive mode once per item.
    """
    loop = [sys.executable, "-m", "swarmforge", "role-loop", "--project", root, record.name]
    path = env.get("PATH")
    if not record.is_exec:
        agent(record.agent).prepare(statedir.path(root, BIN_DIR), path)
    if runs_loop(root, config, record, backend):
        if not record.is_exec:
            # A missing agent is reported when the role starts, not at its first item.
            spec = config.role(record.name)
            commands.require_executable(spec.agent, role=spec.name, path=path, cwd=record.path)
        return loop
    spec, started = config.role(record.name), launch(root, config, record)
    run = sessionrecord.load(root)
    session = conversation.to_resume(root, record.name, spec.agent, run.run_id) if run else None
    if session is not None and agent(record.agent).keeps(env, session):
        resumed = agent(record.agent).resume_argv(spec, started, session)
        if resumed is not None:
            commands.require_executable(resumed[0], role=spec.name, path=path, cwd=record.path)
            return resumed
    return commands.launch_argv(spec, started, path=path)


def process_env(
    root: str,
    config: SwarmConfig,
    run_id: str,
    record: RoleRecord,
    settings: Settings,
    backend: str | None = None,
) -> dict[str, str]:
    """The environment of what runs role `record`: its agent gets an allowlisted one
    (agents/environment.py); swarmforge's own per-item loop gets the whole one, and
    narrows it for what it starts."""
    if runs_loop(root, config, record, backend):
        return rolerecord.role_env(root, run_id, record)
    return agent_env(root, run_id, record, settings.role(record.name))


def runs_loop(
    root: str, config: SwarmConfig, record: RoleRecord, backend: str | None = None
) -> bool:
    """True if role `record` runs swarmforge's per-item loop (which starts its agent or
    command once per item), False if it runs its agent itself."""
    if record.is_exec:
        return True
    spec = config.role(record.name)
    return (backend or run_backend(root)) == "headless" and commands.loops_headless(spec)
