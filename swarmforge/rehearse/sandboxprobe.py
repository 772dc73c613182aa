"""`doctor --probe`: each agent's sandbox proved on this machine, as a role would run it.

For each of claude and codex that the roles use (in their sandboxes), a scratch
repository is made in a temporary directory, never in the project: a first commit
and a worktree of it, as `up` makes a role's. The agent runs there with the command
line and sandbox swarmforge gives a role, against the scripted model on loopback
(offline, with a throw-away home), and is made to run one command: a `git commit` in
the worktree, then a write into the main checkout and one beside the repository. The
probe passes when the commit was made and neither write was.

Both agents run headless (`claude -p`, `codex exec`), as the swarm's loop runs them,
with exactly the allowlisted environment a role gets. The command sets no `git -c`:
claude asks before any, even in its sandbox, since a configuration given that way
can run a program.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from swarmforge import tagging, text
from swarmforge.agents.agent import Launch
from swarmforge.agents.codex.sandbox import link_helper
from swarmforge.agents.commands import headless_argv
from swarmforge.agents.environment import BASE, allowed
from swarmforge.config.conf import parse_config
from swarmforge.doctor.check import Check
from swarmforge.git.command import git
from swarmforge.proc import popen, spawn
from swarmforge.proc.popen import DEVNULL, PIPE, STDOUT
from swarmforge.rehearse.agentenv import agent_env
from swarmforge.rehearse.model import ModelServer
from swarmforge.rehearse.wire import Exchange, Reply

PROMPT = "Run the probe."
PREFIX = "swarmforge-probe-"
TIMEOUT = 60.0  # seconds for one agent to start, run the command and answer
COMMITTED = "sandbox-probe"
FIXES = {
    "claude": "install bubblewrap and socat (apt-get install bubblewrap socat)",
    "codex": "see docs/configuration.md, claude and codex in their sandboxes",
}


@dataclass
class _Scratch:
    """The scratch repository of one probe, and what its command must not write."""

    main: Path
    worktree: Path
    temp: Path
    outside: list[Path]


def _scratch(work: Path) -> _Scratch:
    main = work / "project"
    main.mkdir()
    git(str(main), "init", "-q")
    # An identity of its own, as a user's repository has one (see the docstring).
    git(str(main), "config", "user.name", "swarmforge probe")
    git(str(main), "config", "user.email", "probe@localhost")
    git(str(main), "commit", "-q", "--allow-empty", "-m", "start")
    worktree = main / ".worktrees" / "probe"
    git(str(main), "worktree", "add", "-q", "-b", "probe", str(worktree))
    temp = work / "tmp"
    temp.mkdir()
    return _Scratch(main, worktree, temp, [main / "escaped.txt", work / "escaped.txt"])


def _command(scratch: _Scratch) -> str:
    writes = "; ".join(f"echo x > {path}" for path in scratch.outside)
    return f"git commit -q --allow-empty -m {COMMITTED}; {writes}; echo probed"


def probe(agent: str, path: str | None = None) -> Check:
    """Prove `agent`'s sandbox here: a commit in a worktree works, writes outside fail."""
    name = f"{agent} sandbox probe"
    search = path if path is not None else os.environ.get("PATH", "")
    if spawn.which(agent, search) is None:
        return Check(name, "warn", f"cannot run: {agent} is not on PATH", f"install {agent}")
    with tempfile.TemporaryDirectory(prefix=PREFIX, ignore_cleanup_errors=True) as work:
        scratch = _scratch(Path(work))
        outputs: list[str] = []
        asked: list[bool] = []

        def decide(exchange: Exchange) -> Reply:
            if exchange.tool_output is not None:
                outputs.append(exchange.tool_output)
            elif exchange.new_turn and not asked:
                asked.append(True)
                return Reply(command=_command(scratch))
            return Reply(text="Probed.")

        with ModelServer(decide) as server:
            said = _run(agent, scratch, Path(work), server.base_url("probe"), search)
        made = git(str(scratch.worktree), "log", "-1", "--format=%s").strip() == COMMITTED
        escaped = [str(p) for p in scratch.outside if p.exists()]
    if escaped:
        detail = f"its command wrote outside its worktree: {', '.join(escaped)}"
        return Check(name, "FAIL", detail, "do not give it a bypass flag or sandbox = false")
    if not made:
        # The agent's own words, shown escaped: they reach the terminal.
        last = (outputs[0] if outputs else said).strip().splitlines()[-3:]
        detail = "a git commit in a worktree did not run in its sandbox"
        said_last = text.shown(" / ".join(last)) or "no output"
        return Check(name, "FAIL", f"{detail} ({said_last})", FIXES[agent])
    return Check(name, "ok", "commits in a worktree; writes outside it fail")


def _env(agent: str, scratch: _Scratch, work: Path, base_url: str, path: str) -> dict[str, str]:
    """The agent's environment: what a role's allowlist passes on, its throw-away home, the
    scripted model, a role's PATH."""
    env = allowed(os.environ, BASE) | agent_env(
        agent, str(work / "home"), str(scratch.main), base_url
    )
    helpers = work / "bin"
    helpers.mkdir()
    link_helper(str(helpers), path)  # codex-linux-sandbox, for a system bubblewrap
    return env | {"PATH": f"{helpers}:{path}", "TMPDIR": str(scratch.temp)}


def _launch(scratch: _Scratch, work: Path) -> Launch:
    prompt = work / "prompt.txt"
    prompt.write_text(PROMPT)
    return Launch(str(scratch.worktree), str(prompt), PROMPT, temp_dir=str(scratch.temp))


def _run(agent: str, scratch: _Scratch, work: Path, base_url: str, path: str) -> str:
    """Run `agent` headless in the scratch worktree, as a role; what it printed."""
    role = parse_config(f"window probe {agent} probe\n").roles[0]
    argv = headless_argv(role, _launch(scratch, work), PROMPT)
    env = _env(agent, scratch, work, base_url, path)
    try:
        child = popen.start(
            argv, cwd=str(scratch.worktree), env=env, stdin=DEVNULL, stdout=PIPE, stderr=STDOUT
        )
    except OSError as exc:
        return f"{agent} could not start: {exc.strerror}"
    try:
        with child:
            try:
                out, _ = child.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()
                return f"{agent} did not finish within {TIMEOUT:.0f} s"
    finally:
        # codex's file helper keeps only the agent's TMPDIR and outlives codex.
        tagging.terminate(tagging.strays(str(scratch.temp)))
    return out.decode(errors="replace")
