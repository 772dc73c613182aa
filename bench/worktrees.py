"""Cost of swarmforge's worktree create + remove against bare `git worktree add -b` + `remove`.

Targets (medians of create + remove, ours / git's):
  small repository (a few files)          <= 1.0
  generated repository of 20,000 files    <= 1.1

Both sides spawn git through the same entry point (swarmforge.proc.spawn.run), run on
the same repository, and alternate which goes first in each repetition,
because machines here are shared and noisy. The 20,000-file repository is
generated and committed once per invocation in a temporary directory.

The small repository gets SMALL_FACTOR times the repetitions: they cost milliseconds.

    .venv/bin/python bench/worktrees.py [--reps N] [--files N] [--json]
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

from swarmforge.git.project import ensure_repository
from swarmforge.git.removing import remove
from swarmforge.git.worktrees import create
from swarmforge.proc import spawn

TARGET = {"small": 1.0, "large": 1.1}
SMALL_FACTOR = 5


def make_repo(path: Path, files: int) -> str:
    """A committed repository of `files` small files, 100 to a directory."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for i in range(files):
        directory = path / f"d{i // 100:04d}"
        directory.mkdir(exist_ok=True)
        (directory / f"f{i % 100:03d}.txt").write_text(f"file {i}\n" * 4)
    git(path, "add", "-A")
    git(path, "-c", "gc.auto=0", "commit", "-q", "-m", "generated")
    # Packed, as a repository usually is, and no background `gc --auto` while measuring:
    # either would make the checkouts measure loose-object reads instead of the tools.
    git(path, "gc", "-q")
    git(path, "config", "gc.auto", "0")
    ensure_repository(str(path))  # both sides then run with the same info/exclude
    return str(path)


def _must(argv: list[str]) -> None:
    result = spawn.run(argv)
    if not result.ok:
        raise SystemExit(f"{' '.join(argv)} failed: {result.stderr.decode()}")


def bare(root: str, n: int) -> tuple[float, float]:
    path = f"{root}/.worktrees/bare{n}"
    start = time.perf_counter()
    _must(["git", "-C", root, "worktree", "add", "-q", "-b", f"swarm/bench/bare{n}", path, "HEAD"])
    middle = time.perf_counter()
    _must(["git", "-C", root, "worktree", "remove", path])
    end = time.perf_counter()
    _must(["git", "-C", root, "branch", "-q", "-D", f"swarm/bench/bare{n}"])
    return middle - start, end - middle


def ours(root: str, n: int) -> tuple[float, float]:
    start = time.perf_counter()
    create(root, f"ours{n}", f"swarm/bench/ours{n}")
    middle = time.perf_counter()
    remove(root, f"ours{n}", rescue_ref=f"refs/swarmforge/rescue/bench/ours{n}")
    end = time.perf_counter()
    _must(["git", "-C", root, "branch", "-q", "-D", f"swarm/bench/ours{n}"])
    return middle - start, end - middle


def measure_repo(root: str, reps: int) -> dict[str, object]:
    sides: dict[str, Callable[[str, int], tuple[float, float]]] = {"git": bare, "ours": ours}
    samples: dict[str, dict[str, list[float]]] = {
        s: {"create": [], "remove": [], "total": []} for s in sides
    }
    for side in sides.values():
        side(root, -1)  # warm-up: imports, page cache
    for rep in range(reps):
        order = list(sides) if rep % 2 == 0 else list(reversed(sides))
        for name in order:
            made, removed = sides[name](root, rep)
            samples[name]["create"].append(made)
            samples[name]["remove"].append(removed)
            samples[name]["total"].append(made + removed)
    medians = {
        s: {k: round(statistics.median(v) * 1000, 2) for k, v in parts.items()}
        for s, parts in samples.items()
    }
    ratio = {k: round(medians["ours"][k] / medians["git"][k], 3) for k in medians["ours"]}
    return {"median_ms": medians, "ratio": ratio}


def measure(reps: int, files: int) -> dict[str, object]:
    report: dict[str, object] = {
        "reps": {"small": reps * SMALL_FACTOR, "large": reps},
        "target": TARGET,
    }
    with tempfile.TemporaryDirectory() as tmp:
        repos = {
            "small": make_repo(Path(tmp) / "small", 3),
            "large": make_repo(Path(tmp) / "large", files),
        }
        for label, root in repos.items():
            report[label] = measure_repo(root, reps * SMALL_FACTOR if label == "small" else reps)
    report["within_target"] = all(
        report[label]["ratio"]["total"] <= target  # type: ignore[index]
        for label, target in TARGET.items()
    )
    return report


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
    print(
        f"{args.reps * SMALL_FACTOR} (small) and {args.reps} (large) repetitions, "
        "medians in ms (create / remove / total), ours vs git:"
    )
    for label in TARGET:
        data = report[label]
        assert isinstance(data, dict)
        for side in ("git", "ours"):
            m = data["median_ms"][side]
            print(f"  {label:5} {side:4}  {m['create']:8.2f} {m['remove']:8.2f} {m['total']:8.2f}")
        r = data["ratio"]
        print(
            f"  {label:5} ratio {r['create']:8.3f} {r['remove']:8.3f} {r['total']:8.3f}"
            f"   (target <= {TARGET[label]})"
        )
    print("within target" if report["within_target"] else "OUTSIDE TARGET")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
