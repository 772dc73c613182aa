"""Captures of a role's work: their cost, and what they cost delivery.

capture   one capture of a 20,000-file worktree with 10 files changed, against the
          same done by hand in the same run: `git add -A` into a new temporary
          index, `git write-tree`, `git commit-tree` (target: p50 <= 1.5x), and, as
          a second baseline, the same into a copy of the real index
delivery  the daemon's delivery p50 with its captures on, against off, same run, the
          sender and recipient worktrees holding 2,000 files (target: <= 1.05x)

  .venv/bin/python bench/captures.py [--files 20000] [--runs 15] [--handoffs 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import GIT_ENV, git  # bench/ is the script's directory, first on sys.path
from daemon import latency, make_project

from swarmforge.daemon import starting, stopping
from swarmforge.git import captures


def big_repo(root: Path, files: int) -> None:
    """A committed repository of `files` small files, 200 to a directory."""
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        directory = root / f"d{i // 200:03d}"
        directory.mkdir(exist_ok=True)
        (directory / f"f{i:05d}.txt").write_text(f"file {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "many files")


def change(root: Path, run: int) -> None:
    """10 files changed, differently each run, so that every capture is a new one."""
    for i in range(10):
        (root / f"d{i:03d}" / f"f{i * 200:05d}.txt").write_text(f"run {run} change {i}\n")


def by_hand(root: Path, copy_index: bool) -> float:
    """Seconds of `git add -A` into a temporary index, write-tree and commit-tree."""
    scratch = Path(tempfile.mkdtemp()) / "index"
    if copy_index:
        shutil.copyfile(root / ".git" / "index", scratch)
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(scratch)}
    start = time.perf_counter()
    git_env(root, env, "add", "-A")
    tree = git_env(root, env, "write-tree")
    git_env(root, env, "commit-tree", tree, "-p", "HEAD", "-m", "by hand")
    elapsed = time.perf_counter() - start
    shutil.rmtree(scratch.parent)
    return elapsed


def git_env(root: Path, env: dict[str, str], *args: str) -> str:
    import subprocess

    done = subprocess.run(
        ["git", "-C", str(root), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def capture_cost(files: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big_repo(root, files)
        ours, fresh, copied = [], [], []
        for run in range(runs):
            change(root, run)
            fresh.append(by_hand(root, copy_index=False))
            copied.append(by_hand(root, copy_index=True))
            start = time.perf_counter()
            made = captures.take(str(root), "coder", "bench")
            ours.append(time.perf_counter() - start)
            if made is None:
                raise SystemExit("the capture was not made")
    samples = {"capture": ours, "fresh": fresh, "copied": copied}
    p50 = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    return {
        "files": files,
        "runs": runs,
        "capture_p50_ms": round(p50["capture"], 1),
        "by_hand_new_index_p50_ms": round(p50["fresh"], 1),
        "by_hand_copied_index_p50_ms": round(p50["copied"], 1),
        "ratio_to_new_index": round(p50["capture"] / p50["fresh"], 2),
        "ratio_to_copied_index": round(p50["capture"] / p50["copied"], 2),
    }


def delivery(handoffs: int, rounds: int) -> dict[str, float]:
    """Delivery p50 with the daemon's captures on and off, alternating, in one run."""
    results: dict[str, list[float]] = {"on": [], "off": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        trees = make_project(root)
        for name in ("coder", "qa"):
            for i in range(2000):
                (trees[name] / f"w{i:04d}.txt").write_text(f"{i}\n")
        settings = root / "swarmforge" / "swarmforge.toml"
        settings.parent.mkdir()
        for _ in range(rounds):
            for mode in ("on", "off"):
                enabled = "true" if mode == "on" else "false"
                settings.write_text(f'[captures]\nenabled = {enabled}\nevery = "off"\n')
                starting.start(str(root), ["--notify", "none"])
                try:
                    results[mode].append(latency(trees, handoffs)["p50_ms"])
                finally:
                    stopping.stop(str(root))
        made = len(captures.listed(str(root)))
    on, off = statistics.median(results["on"]), statistics.median(results["off"])
    return {
        "handoffs_per_round": handoffs,
        "rounds": rounds,
        "p50_ms_captures_on": round(on, 3),
        "p50_ms_captures_off": round(off, 3),
        "ratio": round(on / off, 2),
        "captures_made": made,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--handoffs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {
        "capture": capture_cost(args.files, args.runs),
        "delivery": delivery(args.handoffs, args.rounds),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for part, values in report.items():
            print(part)
            for key, value in values.items():
                print(f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
