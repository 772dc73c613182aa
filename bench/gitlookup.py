"""Looking a commit up: through pygit2 in this process against the git CLI (git/objects.py).

In a small repository of a few commits, each repetition measures, in alternating
order (machines here are shared and noisy):

cli       `objects.lookup(root, "HEAD")`: one `git cat-file --batch-check`
abbrev    `objects.lookup(root, <10 hex>, abbreviation=True)`: the gate's lookup
pygit2    open the repository and peel `HEAD` to its commit, as libgit2 does it
start     the two lookups of a worktree's branch start (`git/repo.py` branch_start),
          through pygit2 on one opened repository, against two `lookup` calls

and, in fresh interpreters, what importing costs over `python -c pass`: pygit2, and
the lookup module (what the gate imports). The CLI is the baseline of each ratio.

  .venv/bin/python bench/gitlookup.py [--reps 200] [--imports 20] [--json]
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

from _common import commit, git  # bench/ is the script's directory, first on sys.path

from swarmforge.git import objects
from swarmforge.proc import spawn

Probe = Callable[[], object]


def make_repo(root: Path) -> str:
    """A repository of a few commits; the 10-character abbreviation of its HEAD."""
    git(root, "init", "-q", "-b", "main")
    for i in range(5):
        abbrev = commit(root, f"f{i}.txt", f"file {i}\n")
    return abbrev


def pygit2_probes(root: str) -> tuple[Probe, Probe]:
    """(one lookup of HEAD, the two lookups of a branch start) through pygit2."""
    import pygit2
    from pygit2.enums import RepositoryOpenFlag

    def peeled(repository: pygit2.Repository, rev: str) -> str | None:
        try:
            return str(repository.revparse_single(rev).peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError):
            return None

    def one() -> object:
        return peeled(pygit2.Repository(root, RepositoryOpenFlag.NO_SEARCH), "HEAD")

    def start() -> object:
        repository = pygit2.Repository(root, RepositoryOpenFlag.NO_SEARCH)
        return peeled(repository, "refs/heads/absent") or peeled(repository, "HEAD")

    return one, start


def timed(probes: dict[str, Probe], reps: int) -> dict[str, float]:
    """Median milliseconds of each probe over `reps` repetitions, in alternating order."""
    samples: dict[str, list[float]] = {name: [] for name in probes}
    for probe in probes.values():
        probe()  # warm-up: page cache, first imports
    for rep in range(reps):
        names = list(probes) if rep % 2 == 0 else list(reversed(probes))
        for name in names:
            start = time.perf_counter()
            probes[name]()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(s) * 1000 for name, s in samples.items()}


def import_ms(statements: dict[str, str], reps: int) -> dict[str, float]:
    """Median milliseconds of a fresh interpreter running each statement."""
    probes: dict[str, Probe] = {
        name: (lambda code=code: spawn.run([sys.executable, "-c", code]))
        for name, code in statements.items()
    }
    return timed(probes, reps)


def measure(reps: int, imports: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        abbrev = make_repo(root)
        where = str(root)
        one, start = pygit2_probes(where)
        probes: dict[str, Probe] = {
            "cli": lambda: objects.lookup(where, "HEAD"),
            "abbrev": lambda: objects.lookup(where, abbrev, abbreviation=True),
            "pygit2": one,
            "start_cli": lambda: (
                objects.lookup(where, "refs/heads/absent").commit
                or objects.lookup(where, "HEAD").commit
            ),
            "start_pygit2": start,
        }
        ms = timed(probes, reps)
    started = import_ms(
        {
            "pass": "pass",
            "pygit2": "import pygit2",
            "objects": "from swarmforge.git import objects",
        },
        imports,
    )
    ms["import_pygit2"] = started["pygit2"] - started["pass"]
    ms["import_objects"] = started["objects"] - started["pass"]
    return ms


def report(ms: dict[str, float], reps: int, imports: int) -> dict[str, float | int]:
    saved = ms["cli"] - ms["pygit2"]
    return {
        "reps": reps,
        "import_reps": imports,
        **{f"{name}_ms": round(value, 3) for name, value in ms.items()},
        "pygit2_vs_cli": round(ms["pygit2"] / ms["cli"], 3),
        "start_pygit2_vs_cli": round(ms["start_pygit2"] / ms["start_cli"], 3),
        # How many lookups one process must make before importing pygit2 pays.
        "break_even_lookups": round(ms["import_pygit2"] / saved) if saved > 0 else -1,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="repetitions of each lookup")
    parser.add_argument("--imports", type=int, default=20, help="fresh interpreters of each")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = report(measure(args.reps, args.imports), args.reps, args.imports)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"{args.reps} repetitions ({args.imports} for imports), medians:")
    print(f"  lookup of HEAD, git CLI (baseline)   {found['cli_ms']:8.3f} ms")
    print(f"  lookup of an abbreviation, git CLI   {found['abbrev_ms']:8.3f} ms")
    print(
        f"  lookup of HEAD, pygit2               {found['pygit2_ms']:8.3f} ms"
        f"   ({found['pygit2_vs_cli']} x the CLI)"
    )
    print(f"  branch start, git CLI (baseline)     {found['start_cli_ms']:8.3f} ms")
    print(
        f"  branch start, pygit2                 {found['start_pygit2_ms']:8.3f} ms"
        f"   ({found['start_pygit2_vs_cli']} x the CLI)"
    )
    print(f"  importing pygit2                     {found['import_pygit2_ms']:8.3f} ms")
    print(f"  importing git/objects.py             {found['import_objects_ms']:8.3f} ms")
    print(f"  pygit2 pays after {found['break_even_lookups']} lookups in one process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
