"""What codex's sandbox, as swarmforge fits it to a role's worktree, costs one command.

A `git status` in a role's worktree is run plainly and through `codex sandbox` with the
role's options (workspace-write, the worktree's git directories writable, /tmp not),
interleaved, several times each; medians and their ratio are printed. `codex sandbox`
starts codex's own program before bubblewrap and the command, as codex does for every
command of a session, so the difference is what each command of a codex agent pays.

Run: .venv/bin/python bench/sandbox.py [--count 30]
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

from _common import git  # bench/ is the script's directory, first on sys.path

from swarmforge.agents.codex.sandbox import link_helper, sandbox_args


def timed(argv: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=30, help="runs of each (default 30)")
    ns = parser.parse_args()
    codex = shutil.which(
        "codex", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    if codex is None:
        print("codex is not on PATH (./setup.sh installs it into .venv/bin)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="swarmforge-bench-sandbox-") as work:
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
        options = sandbox_args(tree, str(temp), [], interactive=False)
        # `codex sandbox` takes the sandbox mode as a setting rather than --sandbox.
        mode = options.index("--sandbox")
        config = ["-c", f'sandbox_mode="{options[mode + 1]}"', *options[mode + 2 :]]
        helpers = Path(work, "bin")  # as up's .swarmforge/bin: codex-linux-sandbox for bwrap
        helpers.mkdir()
        link_helper(str(helpers), str(Path(codex).parent))
        env = {"PATH": f"{helpers}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": work}
        plain = ["git", "status", "--porcelain"]
        boxed = [codex, "sandbox", *config, "--", *plain]
        samples: dict[str, list[float]] = {"plain": [], "boxed": []}
        for _ in range(ns.count):
            samples["plain"].append(timed(plain, tree, env))
            samples["boxed"].append(timed(boxed, tree, env))
    medians = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    print(f"{ns.count} runs each, interleaved; medians")
    print(f"  git status                      {medians['plain']:7.1f} ms")
    print(f"  git status in codex's sandbox   {medians['boxed']:7.1f} ms")
    print(
        f"  sandbox cost per command        {medians['boxed'] - medians['plain']:7.1f} ms"
        f"  (ratio {medians['boxed'] / medians['plain']:.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
