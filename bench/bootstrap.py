"""Cost of making a role's worktree with its bootstrap against a bare `git worktree add`.

The repository holds a few tracked files and, git-ignored, a `.env` and a
`node_modules/` of 20,000 files. Ours is what `up` does for a new role worktree:
swarmforge's worktree creation, then the bootstrap of `[bootstrap] copy = [".env"]`,
`symlink = ["node_modules"]` (no setup commands): the patterns matched, one
`git check-ignore`, the copy and the link, and the role's log and setup-failed
mark written and cleared. git's is `git worktree add -b` of the same commit. The
creation alone is measured too, to show what the bootstrap itself adds.

Both sides run on the same repository and alternate which goes first in each
repetition, because machines here are shared and noisy; removing the worktrees
between repetitions is not measured. Target: ours / git's <= 1.3 (medians): the
bootstrap is one `git check-ignore`, a copy and a link, a few milliseconds, however
large node_modules is.

    .venv/bin/python bench/bootstrap.py [--reps N] [--files N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import git  # bench/ is the script's directory, first on sys.path

from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.startsettings import BootstrapSettings
from swarmforge.git.project import ensure_repository
from swarmforge.git.worktrees import create
from swarmforge.proc import policy, spawn
from swarmforge.swarm.bootstrap import worktree

TARGET = 1.3
SETTINGS = BootstrapSettings(copy_paths=[".env"], symlink=["node_modules"])


def make_repo(path: Path, files: int) -> str:
    """A committed repository of a few files, with `files` git-ignored ones in node_modules/."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / ".gitignore").write_text(".env\nnode_modules/\n")
    (path / "README").write_text("project\n")
    (path / "src").mkdir()
    (path / "src" / "app.js").write_text("console.log(1)\n")
    git(path, "add", "-A")
    git(path, "-c", "gc.auto=0", "commit", "-q", "-m", "generated")
    git(path, "gc", "-q")
    git(path, "config", "gc.auto", "0")
    (path / ".env").write_text("SECRET=1\n")
    for i in range(files):
        directory = path / "node_modules" / f"pkg{i // 100:04d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{i % 100:03d}.js").write_text(f"module.exports = {i}\n")
    ensure_repository(str(path))  # both sides then run with the same info/exclude
    return str(path)


def _must(argv: list[str]) -> None:
    result = spawn.run(argv)
    if not result.ok:
        raise SystemExit(f"{' '.join(argv)} failed: {result.stderr.decode()}")


def _drop(root: str, name: str) -> None:
    """Remove a worktree and its branch (not measured)."""
    _must(["git", "-C", root, "worktree", "remove", "--force", f"{root}/.worktrees/{name}"])
    _must(["git", "-C", root, "branch", "-q", "-D", f"swarm/bench/{name}"])


def bare(root: str, n: int) -> float:
    name = f"bare{n}"
    path = f"{root}/.worktrees/{name}"
    start = time.perf_counter()
    _must(["git", "-C", root, "worktree", "add", "-q", "-b", f"swarm/bench/{name}", path, "HEAD"])
    took = time.perf_counter() - start
    _drop(root, name)
    return took


def create_only(root: str, n: int) -> float:
    """swarmforge's worktree creation without a bootstrap: what the bootstrap adds to."""
    name = f"plain{n}"
    start = time.perf_counter()
    create(root, name, f"swarm/bench/{name}")
    took = time.perf_counter() - start
    _drop(root, name)
    return took


def ours(root: str, n: int) -> float:
    name = f"ours{n}"
    role = RoleRecord(
        name=name,
        agent="exec",
        worktree=name,
        path=f"{root}/.worktrees/{name}",
        branch=f"swarm/bench/{name}",
        port=4000,
        mode="task",
    )
    log = f"{root}/.swarmforge/logs/{name}.log"
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    create(root, name, role.branch)
    failed = worktree.run(root, role, SETTINGS, policy.child_env(), log)
    took = time.perf_counter() - start
    if failed is not None or not Path(role.path, "node_modules").is_symlink():
        raise SystemExit(f"bootstrap failed: {failed}")
    _drop(root, name)
    return took


def measure(reps: int, files: int) -> dict[str, object]:
    sides: dict[str, Callable[[str, int], float]] = {
        "git": bare,
        "create": create_only,
        "ours": ours,
    }
    samples: dict[str, list[float]] = {s: [] for s in sides}
    with tempfile.TemporaryDirectory() as tmp:
        root = make_repo(Path(tmp) / "project", files)
        for side in sides.values():
            side(root, -1)  # warm-up: imports, page cache
        for rep in range(reps):
            order = list(sides) if rep % 2 == 0 else list(reversed(sides))
            for name in order:
                samples[name].append(sides[name](root, rep))
    medians = {s: round(statistics.median(v) * 1000, 2) for s, v in samples.items()}
    ratio = round(medians["ours"] / medians["git"], 3)
    return {
        "reps": reps,
        "ignored_files": files,
        "median_ms": medians,
        "bootstrap_ms": round(medians["ours"] - medians["create"], 2),
        "ratio": ratio,
        "target": TARGET,
        "within_target": ratio <= TARGET,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = measure(args.reps, args.files)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    medians = report["median_ms"]
    assert isinstance(medians, dict)
    print(f"{args.reps} repetitions, {args.files} git-ignored files in node_modules, median ms:")
    print(f"  git worktree add             {medians['git']:8.2f}")
    print(f"  ours: create                 {medians['create']:8.2f}")
    print(f"  ours: create + bootstrap     {medians['ours']:8.2f}")
    print(f"  the bootstrap adds           {report['bootstrap_ms']:8.2f}")
    print(f"  ratio {report['ratio']:.3f}   (target <= {TARGET})")
    print("within target" if report["within_target"] else "OUTSIDE TARGET")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
