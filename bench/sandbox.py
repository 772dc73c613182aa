"""What each agent's sandbox, as swarmforge fits it to a role's worktree, costs one command.

codex: a `git status` in a role's worktree is run plainly and through `codex sandbox`
with the role's permission profile (the worktree and its git directories writable, /tmp
not), interleaved, several times each. `codex sandbox` starts codex's own program before
bubblewrap and the command, as codex does for every command of a session, so the
difference is what each command of a codex agent pays.

claude: the real claude (`claude -p`, offline against the scripted model) runs `git
status` as its shell tool many times in one turn, in its sandbox as swarmforge starts
it, and outside it (`sandbox = false`, the tool allowed); sessions of each alternate.
The time from the model's answer naming the command to claude's next request carrying
its result is one command's round trip; the difference of the medians is what claude's
box adds to each command.

Medians and their ratio are printed. Run: .venv/bin/python bench/sandbox.py [--count 30]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import git, timed  # bench/ is the script's directory, first on sys.path

from swarmforge.agents.agent import Launch
from swarmforge.agents.codex.sandbox import PROFILE, link_helper, sandbox_args
from swarmforge.agents.commands import headless_argv
from swarmforge.config.conf import parse_config
from swarmforge.rehearse.agentenv import agent_env
from swarmforge.rehearse.model import ModelServer
from swarmforge.rehearse.wire import Exchange, Reply

PLAIN = ["git", "status", "--porcelain"]


def project(work: str) -> tuple[Path, str, Path]:
    """A repository of 200 files with a role's worktree: the repository, the worktree and
    the role's temporary directory."""
    repo = Path(work, "project")
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for n in range(200):
        (repo / f"f{n}.txt").write_text(f"{n}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    tree = str(repo / ".worktrees" / "coder")
    git(repo, "worktree", "add", "-q", "-b", "swarm/bench/coder", tree)
    temp = Path(work, "tmp", "coder")
    temp.mkdir(parents=True)
    return repo, tree, temp


def found(name: str) -> str | None:
    return shutil.which(
        name, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )


def report(agent: str, count: int, samples: dict[str, list[float]]) -> None:
    medians = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    print(f"{agent}: {count} commands each way, interleaved; medians")
    print(f"  git status                      {medians['plain']:7.1f} ms")
    print(f"  git status in {agent}'s sandbox  {medians['boxed']:7.1f} ms")
    print(
        f"  sandbox cost per command        {medians['boxed'] - medians['plain']:7.1f} ms"
        f"  (ratio {medians['boxed'] / medians['plain']:.2f})"
    )


def claude_session(
    claude: str, repo: Path, tree: str, temp: Path, work: str, boxed: bool, commands: int
) -> list[float]:
    """One `claude -p` turn of `commands` git statuses; each command's round trip."""
    asked: list[float] = []
    returned: list[float] = []

    def decide(exchange: Exchange) -> Reply:
        if exchange.tool_output is not None:
            returned.append(exchange.at)
        if len(asked) < commands:
            asked.append(time.time())
            return Reply(command=" ".join(PLAIN))
        return Reply(text="Done.")

    extra = "" if boxed else " --allowedTools Bash"
    role = parse_config(f"window coder claude coder{extra}\n").roles[0]
    launch = Launch(tree, "", "", sandbox=boxed, temp_dir=str(temp))
    with ModelServer(decide) as server:
        home = Path(tempfile.mkdtemp(prefix="home-", dir=work))
        env = agent_env("claude", str(home), str(repo), server.base_url("coder"))
        env |= {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": str(temp)}
        argv = headless_argv(role, launch, "Run git status.")
        argv[0] = claude
        done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, timeout=600)
        if done.returncode != 0 or len(returned) != commands:
            said = (done.stdout + done.stderr).decode(errors="replace")[-500:]
            raise SystemExit(f"claude failed ({len(returned)}/{commands} results): {said}")
    return [back - sent for sent, back in zip(asked, returned, strict=True)]


def bench_claude(claude: str, count: int) -> None:
    with tempfile.TemporaryDirectory(prefix="swarmforge-bench-sandbox-") as work:
        repo, tree, temp = project(work)
        samples: dict[str, list[float]] = {"plain": [], "boxed": []}
        per = max(1, count // 3)
        while len(samples["boxed"]) < count:
            samples["plain"] += claude_session(claude, repo, tree, temp, work, False, per)
            samples["boxed"] += claude_session(claude, repo, tree, temp, work, True, per)
    report("claude", len(samples["boxed"]), samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=30, help="runs of each (default 30)")
    ns = parser.parse_args()
    codex, claude = found("codex"), found("claude")
    if codex is None or claude is None:
        print("claude or codex is not on PATH (./setup.sh installs them)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="swarmforge-bench-sandbox-") as work:
        _, tree, temp = project(work)
        # `codex sandbox` names the profile to apply (-P) besides the role's settings.
        config = ["-C", tree, "-P", PROFILE, *sandbox_args(tree, str(temp), [], interactive=False)]
        helpers = Path(work, "bin")  # as up's .swarmforge/bin: codex-linux-sandbox for bwrap
        helpers.mkdir()
        link_helper(str(helpers), str(Path(codex).parent))
        env = {"PATH": f"{helpers}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": work}
        boxed = [codex, "sandbox", *config, "--", *PLAIN]
        samples: dict[str, list[float]] = {"plain": [], "boxed": []}
        for _ in range(ns.count):
            samples["plain"].append(timed(PLAIN, tree, env))
            samples["boxed"].append(timed(boxed, tree, env))
    report("codex", ns.count, samples)
    bench_claude(claude, ns.count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
