"""`rehearse`: the project's swarm, with the real agent CLIs, against a scripted model.

The swarm runs on a throw-away copy of the project (a clone of its history with
its current `swarmforge/` laid over it), never in the project itself. Each agent
gets a throw-away home seeded for unattended use and talks only to the scripted
model on loopback, so a rehearsal costs nothing and needs no network. It starts
the swarm (in tmux, or headless), queues the script's opening handoffs, waits
until every scripted role has played all its turns (or the script's timeout),
stops everything, and reports what each role did.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from swarmforge.config.conf import load_config
from swarmforge.config.role import EXEC
from swarmforge.config.roster import SwarmConfig
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import fromuser
from swarmforge.rehearse.agentenv import agent_env
from swarmforge.rehearse.director import Director
from swarmforge.rehearse.model import ModelServer
from swarmforge.rehearse.projectcopy import copy_project
from swarmforge.rehearse.script import Script, check_roles, load_script
from swarmforge.rehearse.stage import Played
from swarmforge.swarm.session.down import down as swarm_down
from swarmforge.swarm.session.up import up as swarm_up

Progress = Callable[[str], None]
POLL = 0.2
SCREEN_LINES = 25


@dataclass(frozen=True)
class RoleReport:
    """What one role did: the turns it played, and how many messages came after its script."""

    turns: list[Played]
    scripted_turns: int
    unscripted_turns: int


@dataclass(frozen=True)
class Outcome:
    """A finished rehearsal: what each role did, and every expectation that failed."""

    project: str
    copy: str | None  # the copy it ran on, when kept
    roles: dict[str, RoleReport]
    problems: list[str]

    @property
    def ok(self) -> bool:
        """True when every expectation held."""
        return not self.problems


def _check_agents(config: SwarmConfig) -> None:
    others = [r for r in config.roles if r.agent not in ("claude", "codex", EXEC)]
    if others:
        names = ", ".join(f"{r.name} ({r.agent})" for r in others)
        raise SwarmforgeError(
            f"A rehearsal plays claude and codex roles (and runs exec roles); not {names}.",
            hint="Rehearse a configuration whose agent roles are claude or codex.",
        )


def _stalled(director: Director, limit: float, project: str, config: SwarmConfig) -> list[str]:
    """A problem for each role that stopped answering mid-turn, with what its screen shows."""
    from swarmforge.tmux.server import Tmux, project_socket

    problems = []
    for role, turn, command in director.stalled(limit):
        try:
            session = config.role(role).session_name
            screen = Tmux(project_socket(project)).capture(f"={session}:", SCREEN_LINES)
        except SwarmforgeError:
            screen = []
        shown = "".join(f"\n    | {line}" for line in screen if line.strip())
        problems.append(
            f"role {role}, turn {turn}: no result of `{command}` after {limit:.0f} s "
            f"(waiting for an approval?); its screen:{shown}"
        )
    return problems


def _wait(
    director: Director, script: Script, project: str, config: SwarmConfig, progress: Progress
) -> list[str]:
    """Wait until every role has played its turns, or one turn failed its expectations;
    the problems that ended the wait early."""
    deadline = time.monotonic() + script.timeout
    shown: dict[str, str] = {}
    while time.monotonic() < deadline:
        for role, line in director.progress().items():
            if shown.get(role) != line:
                progress(f"{role}: {line}")
                shown[role] = line
        if director.finished():
            return []
        if director.failed():
            progress("a turn did not go as expected: stopping early")
            return []  # the turn's problems are the director's to report
        stalled = _stalled(director, script.stall, project, config)
        if stalled:
            return stalled
        time.sleep(POLL)
    return [f"timed out after {script.timeout:.0f} s"]


def _play(
    script: Script,
    config: SwarmConfig,
    project: str,
    work: str,
    backend: str,
    progress: Progress,
) -> tuple[Director, list[str]]:
    worktrees = {r.name: r.worktree_path(project) for r in config.roles}
    director = Director(script, worktrees)
    problems: list[str] = []
    homes = Path(work, "homes")
    with ModelServer(director.decide) as server:
        env = {
            r.name: agent_env(r.agent, str(homes / r.name), project, server.base_url(r.name))
            for r in config.roles
            if r.agent in ("claude", "codex")
        }
        try:
            swarm_up(project, backend, stagger=0.0, role_env=env, progress=progress)
            for send in script.send:
                path, _ = fromuser.send(project, send.to, send.text, type_=send.type)
                progress(f"sent {Path(path).name}")
            problems += _wait(director, script, project, config, progress)
        finally:
            progress("stopping the swarm")
            swarm_down(project, purge=True)
        problems += [f"model: {error}" for error in server.errors()]
    return director, problems


def _check_start(script: Script, script_path: str, backend: str) -> None:
    """Refuse a script that can never start: a headless agent works only on a handoff, so
    a headless rehearsal needs one to begin with."""
    if backend == "headless" and not script.send:
        raise SwarmforgeError(
            f"{script_path}: a headless rehearsal can never start without a [[send]].",
            hint="Headless agents work only on handoffs: add a [[send]] that gives one "
            "its first task, or rehearse in tmux (the default), where each agent opens "
            "with its prompt.",
        )


def _timed(progress: Progress) -> Progress:
    """`progress` with each line led by the seconds since the rehearsal began."""
    start = time.monotonic()
    return lambda line: progress(f"[{time.monotonic() - start:5.1f} s] {line}")


def rehearse(
    root: str,
    script_path: str,
    *,
    backend: str = "tmux",
    keep: bool = False,
    progress: Progress = lambda line: None,
) -> Outcome:
    """Rehearse the swarm of the project at `root` with the script at `script_path`."""
    root = os.path.realpath(root)
    script = load_script(script_path)
    config = load_config(root)
    _check_agents(config)
    check_roles(script, script_path, {r.name: r.agent for r in config.roles})
    _check_start(script, script_path, backend)
    progress = _timed(progress)
    work = tempfile.mkdtemp(prefix="swarmforge-rehearsal-")
    try:
        project = copy_project(root, Path(work, "project"))
        progress(f"rehearsing on a copy of {root} in {project}")
        director, problems = _play(script, load_config(project), project, work, backend, progress)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    roles = {
        role: RoleReport(list(stage.played), len(stage.turns), stage.unscripted)
        for role, stage in director.stages.items()
    }
    return Outcome(root, work if keep else None, roles, problems + director.problems())
