"""`up` and `down` of a six-role headless swarm of exec roles.

Each repetition makes a fresh project and times, through the CLI:
  up (cold)     worktrees created, daemon and runner started
  down          every process stopped
  up (resume)   the same run started again on its existing worktrees
  down --purge  stopped, worktrees removed (work rescued first)
The baseline, measured in the same run, is what git alone needs for the same
worktrees: six `git worktree add -b` (for a cold up) and six `git worktree
remove` (for a purge). Medians over the repetitions.

    .venv/bin/python bench/swarm.py [--reps 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import git  # bench/ is the script's directory, first on sys.path

ROLES = ("specifier", "coder", "cleaner", "architect", "hardener", "qa")
SWARMFORGE = str(Path(sys.executable).parent / "swarmforge")


def project(base: Path) -> Path:
    root = base / "project"
    (root / "swarmforge").mkdir(parents=True)
    conf = "".join(
        f"window {r} exec {r} {'batch' if i % 2 else 'task'} true\n" for i, r in enumerate(ROLES)
    )
    (root / "swarmforge" / "swarmforge.conf").write_text(conf)
    (root / "swarmforge" / "constitution.prompt").write_text("x\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root


def timed(*args: str, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([SWARMFORGE, *args], cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def baseline(root: Path) -> tuple[float, float]:
    start = time.perf_counter()
    for role in ROLES:
        git(root, "worktree", "add", "-q", "-b", f"plain/{role}", str(root / "plain" / role))
    added = time.perf_counter() - start
    start = time.perf_counter()
    for role in ROLES:
        git(root, "worktree", "remove", "--force", str(root / "plain" / role))
    return added, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    samples: dict[str, list[float]] = {
        k: [] for k in ("up_cold", "down", "up_resume", "down_purge", "git_add_x6", "git_remove_x6")
    }
    for _ in range(args.reps):
        with tempfile.TemporaryDirectory() as tmp:
            root = project(Path(tmp))
            added, removed = baseline(root)
            samples["git_add_x6"].append(added)
            samples["git_remove_x6"].append(removed)
            samples["up_cold"].append(timed("up", "--backend", "headless", cwd=root))
            samples["down"].append(timed("down", cwd=root))
            samples["up_resume"].append(timed("up", cwd=root))
            samples["down_purge"].append(timed("down", "--purge", cwd=root))
    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    report = {
        "reps": args.reps,
        "median_ms": {k: round(v, 1) for k, v in med.items()},
        "up_cold_vs_git_add": round(med["up_cold"] / med["git_add_x6"], 2),
        "down_purge_vs_git_remove": round(med["down_purge"] / med["git_remove_x6"], 2),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"six-role headless swarm, {args.reps} repetitions, medians:")
    for key, value in report["median_ms"].items():  # type: ignore[union-attr]
        print(f"  {key:14s} {value:8.1f} ms")
    print(f"  up (cold) / six git worktree add:        {report['up_cold_vs_git_add']}")
    print(f"  down --purge / six git worktree remove:  {report['down_purge_vs_git_remove']}")
    return 0


if __name__ == "__main__":
    os.environ.pop("SWARMFORGE_RUN_ID", None)
    sys.exit(main())
