"""The merge check at delivery: what it adds to a git_handoff, next to a note, on a big repository.

A repository of --files files (in directories of 100, committed once) and a daemon
running. Each round, one at a time, measured as bench/daemon.py measures latency
(from the rename into outbox/ to the copy in the recipient's inbox/new/):

note      a note to qa: no merge check
clean     a git_handoff to qa of a commit that merges cleanly into qa's branch
conflict  a git_handoff to qa of a commit that conflicts with qa's branch

Every commit handed over is new (one more file changed), so no result is reused.
`check` is the merge check alone (mergecheck.resolve and mergecheck.against),
called in this process on the same commits, without the daemon.

  .venv/bin/python bench/mergecheck.py [--files 20000] [--handoffs 50] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import (  # bench/ is the script's directory, first on sys.path
    commit,
    git,
    role_worktrees,
)
from _common import delivered as timed

from swarmforge.daemon import starting, stopping
from swarmforge.git import mergecheck
from swarmforge.handoff import message
from swarmforge.handoff.draft import Draft

ROLES = ("coder", "hardener", "qa")  # coder's commits merge into qa cleanly, hardener's do not
PER_DIR = 100


def make_project(root: Path, files: int) -> dict[str, Path]:
    """The repository, committed once, and a worktree per role; qa's branch edits one file."""
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        directory = root / "src" / f"d{i // PER_DIR:04d}"
        if i % PER_DIR == 0:
            directory.mkdir(parents=True)
        (directory / f"f{i:05d}.txt").write_text(f"file {i}\nline two\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{files} files")
    trees = role_worktrees(root, ROLES)
    commit(trees["qa"], "src/d0000/f00000.txt", "qa's own line\n")
    return trees


def delivered(sender: Path, recipient: Path, draft: Draft, seq: int) -> tuple[float, str]:
    """Seconds from the rename into the outbox to the copy in the inbox; the copy's result."""
    seconds, copy = timed(sender, recipient, draft, seq)
    return seconds, message.read(copy).get("merge_check") or "none"


def check_alone(trees: dict[str, Path], abbrev: str) -> float:
    """Seconds the merge check of `abbrev` into qa's branch takes, without the daemon."""
    start = time.perf_counter()
    oid = mergecheck.resolve(str(trees["coder"]), abbrev)
    assert oid is not None
    mergecheck.against(str(trees["qa"]), oid, abbrev)
    return time.perf_counter() - start


def rounds(trees: dict[str, Path], count: int) -> dict[str, list[float]]:
    """`count` rounds of a note, a clean handoff and a conflicting one; seconds of each."""
    samples: dict[str, list[float]] = {"note": [], "clean": [], "conflict": [], "check": []}
    commit(trees["hardener"], "src/d0000/f00000.txt", "hardener's own line\n")
    qa = trees["qa"]
    for i in range(count):
        note = Draft("note", ["qa"], "50", message=f"m{i}")
        seconds, result = delivered(trees["coder"], qa, note, 3 * i + 1)
        samples["note"].append(seconds)
        clean = commit(trees["coder"], f"src/d{1 + i % 99:04d}/f{i:05d}.txt", f"coder {i}\n")
        draft = Draft("git_handoff", ["qa"], "50", task=f"t{i}", commit=clean)
        seconds, result = delivered(trees["coder"], qa, draft, 3 * i + 2)
        assert result == mergecheck.CLEAN, result
        samples["clean"].append(seconds)
        samples["check"].append(check_alone(trees, clean))
        bad = commit(trees["hardener"], f"src/d0099/f{9900 + i:05d}.txt", f"hardener {i}\n")
        draft = Draft("git_handoff", ["qa"], "50", task=f"h{i}", commit=bad)
        seconds, result = delivered(trees["hardener"], qa, draft, 3 * i + 3)
        assert result == mergecheck.CONFLICT, result
        samples["conflict"].append(seconds)
    return samples


def median_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=20000, help="files in the repository")
    parser.add_argument("--handoffs", type=int, default=50, help="rounds measured (50)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.files < 10000:
        parser.error("--files must be at least 10000 (the conflicting commits use d0099)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        started = time.perf_counter()
        trees = make_project(root, args.files)
        setup = time.perf_counter() - started
        starting.start(str(root), ["--notify", "none"])
        try:
            samples = rounds(trees, args.handoffs)
        finally:
            stopping.stop(str(root))
    report: dict[str, object] = {
        "files": args.files,
        "rounds": args.handoffs,
        "setup_s": round(setup, 1),
        **{f"{kind}_p50_ms": median_ms(values) for kind, values in samples.items()},
    }
    note = float(str(report["note_p50_ms"]))
    for kind in ("clean", "conflict"):
        report[f"{kind}_vs_note"] = round(float(str(report[f"{kind}_p50_ms"])) / note, 2)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.files} files, {args.handoffs} rounds (set up in {report['setup_s']} s), medians:")
    print(f"  note, no check:          {report['note_p50_ms']} ms")
    print(
        f"  git_handoff, clean:      {report['clean_p50_ms']} ms "
        f"({report['clean_vs_note']} x the note)"
    )
    print(
        f"  git_handoff, conflict:   {report['conflict_p50_ms']} ms "
        f"({report['conflict_vs_note']} x the note)"
    )
    print(f"  the check alone:         {report['check_p50_ms']} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
