"""Planned runs: 1,000 trivial tasks against `xargs -P8`, and resume of a long journal.

  dispatch  1,000 independent tasks running `true` with concurrency 8, through
            the orchestrator (journal, reports and all), against `xargs -P8`
            running the same 1,000 commands in the same run (target ratio <= 1.3)

    .venv/bin/python bench/run.py [--tasks 1000] [--reps 9] [--dir DIR] [--json]

Where the projects are made matters on ext4 without a journal (as here): it does
not reuse an inode within minutes of its deletion, and scans past every such
inode when it allocates one, so after a test suite or a benchmark has removed
thousands of files in the temporary directory, creating each report there costs
several times more. `--dir` puts the projects elsewhere (on a directory nothing
has churned lately); the path is printed with the figures.

The resume budget (100,000 events in <= 2 s) is measured by bench/resume.py.
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

from swarmforge.run.orchestrator import Orchestrator
from swarmforge.run.spec import RunSpec


def spec(tasks: int, nonce: int) -> RunSpec:
    return RunSpec.model_validate(
        {
            "goal": f"bench {nonce}",
            "maxConcurrency": 8,
            "tasks": [{"id": f"t{i}", "command": ["true"]} for i in range(tasks)],
        }
    )


def ours(root: Path, tasks: int, nonce: int) -> float:
    os.sync()  # neither side pays for the other's writeback
    start = time.perf_counter()
    result = Orchestrator(str(root), spec(tasks, nonce)).run()
    elapsed = time.perf_counter() - start
    counts = result["counts"]
    assert isinstance(counts, dict) and counts.get("done") == tasks, counts
    return elapsed


def xargs_true(tasks: int) -> float:
    os.sync()
    start = time.perf_counter()
    subprocess.run(
        ["xargs", "-P8", "-I{}", "true"],
        input="".join(f"{i}\n" for i in range(tasks)).encode(),
        check=True,
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--dir", help="where to make the projects (default: the temp dir)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    mine, base = [], []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for rep in range(args.reps):
            root = Path(tmp) / f"p{rep}"
            root.mkdir()
            base.append(xargs_true(args.tasks))
            mine.append(ours(root, args.tasks, rep))
    # Each repetition runs both sides back to back, so its ratio sees the same machine
    # load on both; the median of those ratios is the figure to quote.
    ratios = sorted(m / b for m, b in zip(mine, base, strict=True))
    report = {
        "tasks": args.tasks,
        "reps": args.reps,
        "dir": tempfile.gettempdir() if args.dir is None else os.path.abspath(args.dir),
        "orchestrator_s": round(statistics.median(mine), 3),
        "xargs_s": round(statistics.median(base), 3),
        "ratio": round(statistics.median(ratios), 2),
        "ratios": [round(r, 2) for r in ratios],
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{args.tasks} tasks `true`, concurrency 8, {args.reps} repetitions in "
            f"{report['dir']}: orchestrator "
            f"median {report['orchestrator_s']} s, xargs -P8 median {report['xargs_s']} s; "
            f"median ratio {report['ratio']} (target <= 1.3; "
            f"range {report['ratios'][0]}..{report['ratios'][-1]})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
