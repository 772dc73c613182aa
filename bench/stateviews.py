"""Swarm state out of git's reach: how soon what an agent deletes in its checkout is back.

clean     from `git clean -fdx` in a role's worktree (which deletes its `.swarmforge`
          view) to the view made again, with every queued handoff seen through it
rm        from `rm -rf .swarmforge/` there (which follows the view and deletes the
          mailbox's contents) to every queued handoff put back by the daemon

Both against the target (p50 <= 1 s), and against the daemon's keeping pass interval
measured in the same run (the time it waits between two looks).

  .venv/bin/python bench/stateviews.py [--runs 15] [--handoffs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from daemon import make_project, queue, wait_for  # bench/ is the script's directory

from swarmforge.daemon import keeping, starting, stopping
from swarmforge.handoff.mailbox import Box, Mailbox


def seen_again(view: Path, names: list[str], timeout: float = 10.0) -> float:
    """When every one of `names` is seen in the queue through the view (perf_counter)."""
    deadline = time.monotonic() + timeout
    queued = view / "handoffs" / "inbox" / "new"
    while not all((queued / name).exists() for name in names):
        if time.monotonic() > deadline:
            raise SystemExit(f"not back within {timeout} s: {queued}")
        time.sleep(0.001)
    return time.perf_counter()


def measure(runs: int, handoffs: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trees = make_project(root)
        starting.start(str(root), ["--notify", "none"])
        try:
            finals = []
            inbox = Path(Mailbox(str(trees["qa"])).path(Box.NEW))
            for seq in range(1, handoffs + 1):
                staged, final = queue(trees["coder"], ["qa"], seq)
                Path(staged).rename(final)
                finals.append(Path(final).name)
            wait_for([inbox / name for name in finals])
            view = trees["qa"] / ".swarmforge"
            samples: dict[str, list[float]] = {"clean": [], "rm": []}
            for _ in range(runs):
                start = time.perf_counter()
                subprocess.run(["git", "clean", "-fdxq"], cwd=trees["qa"], check=True)
                samples["clean"].append(seen_again(view, finals) - start)
                start = time.perf_counter()
                subprocess.run(["rm", "-rf", ".swarmforge/"], cwd=trees["qa"], check=True)
                samples["rm"].append(seen_again(view, finals) - start)
        finally:
            stopping.stop(str(root))
    report: dict[str, object] = {"runs": runs, "handoffs": handoffs}
    for name, values in samples.items():
        values.sort()
        p50 = statistics.median(values)
        report[f"{name}_p50_s"] = round(p50, 3)
        report[f"{name}_p90_s"] = round(values[int(0.9 * (len(values) - 1))], 3)
        report[f"{name}_ratio_to_target"] = round(p50 / 1.0, 2)
        report[f"{name}_ratio_to_pass"] = round(p50 / keeping.KEEP_SECONDS, 2)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--handoffs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = measure(args.runs, args.handoffs)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
