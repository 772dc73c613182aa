"""Planned runs at scale: 10,000 tasks (chains and fan-outs mixed) against 1,000.

  per task  the orchestrator's wall time per task for 10,000 `true` tasks at
            concurrency 8 (100 chains of 50, and 50 fan-outs of 100 subtasks,
            each fan-out waiting for the 10th link of one chain), relative to
            the same figure for 1,000 independent tasks (target <= 1.3)
  memory    the peak resident size of the process that ran the 10,000 tasks
            (target <= 150 MB)

    .venv/bin/python bench/scale.py [--reps 3] [--dir DIR] [--json]

Each run is a fresh interpreter (this script with --one), so that its peak
resident size is its own; the time is measured inside it, around the run. The
two sizes alternate, repetition by repetition, and medians are compared. As in
bench/run.py, every task writes a report file: `--dir` chooses where (see that
script's docstring on file systems that make files slowly).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swarmforge.run.orchestrator import Orchestrator
from swarmforge.run.spec.runspec import RunSpec

CHAINS, LINKS, FANS, ITEMS = 100, 50, 50, 100
ITEM = "{{item}}"  # a fan-out's items must differ in their work: `true` ignores its argument
TARGET_RATIO, TARGET_MB = 1.3, 150


def flat(tasks: int, nonce: str) -> RunSpec:
    """`tasks` independent tasks."""
    return RunSpec.model_validate(
        {
            "goal": f"flat {nonce}",
            "maxConcurrency": 8,
            "tasks": [{"id": f"t{i}", "command": ["true"]} for i in range(tasks)],
        }
    )


def mixed(nonce: str) -> RunSpec:
    """CHAINS chains of LINKS tasks, and FANS fan-outs of ITEMS subtasks."""
    tasks: list[dict[str, object]] = []
    for c in range(max(CHAINS, FANS)):
        if c < CHAINS:
            for n in range(LINKS):
                deps = [f"c{c}-{n - 1}"] if n else []
                tasks.append({"id": f"c{c}-{n}", "command": ["true"], "dependsOn": deps})
        if c < FANS:
            tasks.append(
                {
                    "id": f"f{c}",
                    "dependsOn": [f"c{c}-9"],
                    "fanOut": {
                        "items": [str(i) for i in range(ITEMS)],
                        "template": {"id": f"f{c}-{ITEM}", "command": ["true", ITEM]},
                    },
                }
            )
    return RunSpec.model_validate({"goal": f"mixed {nonce}", "maxConcurrency": 8, "tasks": tasks})


def peak_rss() -> int:
    """The most memory this process has had resident at once, in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, the rest KiB


def one(kind: str, root: str) -> dict[str, float]:
    """Run one spec in this process; its wall time, task count and peak RSS."""
    nonce = Path(root).name
    spec = mixed(nonce) if kind == "mixed" else flat(1000, nonce)
    tasks = CHAINS * LINKS + FANS * ITEMS if kind == "mixed" else 1000
    os.sync()
    start = time.perf_counter()
    result = Orchestrator(root, spec).run()
    elapsed = time.perf_counter() - start
    assert result.counts.get("done", 0) >= tasks, result.counts
    return {"seconds": elapsed, "tasks": tasks, "peak_rss": peak_rss()}


def child(kind: str, root: Path) -> dict[str, float]:
    root.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, __file__, "--one", kind, str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, float] = json.loads(done.stdout)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", help="where to make the projects (default: the temp dir)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", nargs=2, metavar=("KIND", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    small, large = [], []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for rep in range(args.reps):
            small.append(child("flat", Path(tmp, f"flat{rep}")))
            large.append(child("mixed", Path(tmp, f"mixed{rep}")))
    per_small = statistics.median(r["seconds"] / r["tasks"] for r in small)
    per_large = statistics.median(r["seconds"] / r["tasks"] for r in large)
    peak_mb = max(r["peak_rss"] for r in large) / 2**20
    report = {
        "reps": args.reps,
        "flat_1000_s": round(statistics.median(r["seconds"] for r in small), 3),
        "mixed_10000_s": round(statistics.median(r["seconds"] for r in large), 3),
        "per_task_1000_us": round(per_small * 1e6),
        "per_task_10000_us": round(per_large * 1e6),
        "ratio": round(per_large / per_small, 2),
        "peak_rss_10000_mb": round(peak_mb, 1),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"per task: {report['per_task_10000_us']} us over 10,000 mixed tasks, "
            f"{report['per_task_1000_us']} us over 1,000 independent ones: ratio "
            f"{report['ratio']} (target <= {TARGET_RATIO}); peak RSS of the 10,000-task "
            f"orchestrator {report['peak_rss_10000_mb']} MB (target <= {TARGET_MB}); "
            f"medians of {args.reps} repetitions"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
