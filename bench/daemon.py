"""The delivery daemon: latency, throughput, and idle CPU.

latency   from the gate's rename into outbox/ to the copy appearing in the
          recipient's inbox/new/, daemon running, one handoff at a time
          (targets: p50 <= 10 ms, p99 <= 50 ms)
throughput  handoffs with three recipients each, queued at once, against a
          bare write+fsync+rename loop making as many files on the same disk
idle CPU  of a daemon watching six roles for a while (target: < 1% of a core)

  .venv/bin/python bench/daemon.py [--handoffs 500] [--burst 300] [--idle 60] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil
from _common import (
    git,  # bench/ is the script's directory, first on sys.path
    role_worktrees,
)
from _common import queue as queue_draft

from swarmforge.daemon import starting, stopping
from swarmforge.handoff.draft import Draft
from swarmforge.handoff.mailbox import Box, Mailbox

ROLES = ("coder", "cleaner", "qa", "architect", "hardener", "specifier")


def make_project(root: Path) -> dict[str, Path]:
    git(root, "init", "-q", "-b", "main")
    (root / "f").write_text("x\n")
    git(root, "add", "f")
    git(root, "commit", "-q", "-m", "init")
    return role_worktrees(root, ROLES)


def queue(sender: Path, recipients: list[str], seq: int) -> tuple[str, str]:
    """A note under outbox/tmp/ as the gate writes it; (temporary path, final path)."""
    return queue_draft(sender, Draft("note", recipients, "50", message=f"m{seq}"), seq)


def wait_for(paths: list[Path], timeout: float = 30.0) -> float:
    deadline = time.monotonic() + timeout
    for path in paths:
        while not path.exists():
            if time.monotonic() > deadline:
                raise SystemExit(f"not delivered within {timeout} s: {path}")
            time.sleep(0.0001)
    return time.perf_counter()


def latency(trees: dict[str, Path], count: int) -> dict[str, float]:
    samples = []
    inbox = Path(Mailbox(str(trees["qa"])).path(Box.NEW))
    for seq in range(1, count + 1):
        tmp, final = queue(trees["coder"], ["qa"], seq)
        staged, copy = Path(tmp), inbox / Path(final).name
        start = time.perf_counter()
        staged.rename(final)
        samples.append(wait_for([copy]) - start)
    samples.sort()
    ms = [s * 1000 for s in samples]
    return {
        "count": count,
        "p50_ms": round(statistics.median(ms), 3),
        "p90_ms": round(ms[int(0.90 * (len(ms) - 1))], 3),
        "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 3),
        "max_ms": round(ms[-1], 3),
    }


def throughput(trees: dict[str, Path], count: int, first_seq: int) -> dict[str, float]:
    recipients = ["qa", "cleaner", "architect"]
    staged = [
        (Path(tmp), final)
        for tmp, final in (queue(trees["coder"], recipients, first_seq + i) for i in range(count))
    ]
    copies = [
        Path(Mailbox(str(trees[r])).path(Box.NEW), Path(final).name)
        for _, final in staged
        for r in recipients
    ]
    start = time.perf_counter()
    for tmp, final in staged:
        tmp.rename(final)
    elapsed = wait_for(copies, timeout=120) - start
    return {
        "handoffs": count,
        "seconds": round(elapsed, 3),
        "handoffs_per_s": round(count / elapsed, 1),
        "copies_per_s": round(len(copies) / elapsed, 1),
    }


def bare_loop(directory: Path, files: int) -> float:
    """Files per second of write + fsync + rename on the same disk."""
    directory.mkdir()
    data = b"x" * 400
    start = time.perf_counter()
    for i in range(files):
        tmp, final = directory / f".{i}.tmp", directory / f"{i}.handoff"
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        tmp.rename(final)
    return files / (time.perf_counter() - start)


def idle_cpu(pid: int, seconds: float) -> float:
    proc = psutil.Process(pid)
    before = proc.cpu_times()
    time.sleep(seconds)
    after = proc.cpu_times()
    used = (after.user - before.user) + (after.system - before.system)
    return round(100 * used / seconds, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--handoffs", type=int, default=500, help="latency samples (500)")
    parser.add_argument("--burst", type=int, default=300, help="handoffs in the burst (300)")
    parser.add_argument("--idle", type=float, default=60.0, help="idle seconds measured (60)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        trees = make_project(root)
        pid, _ = starting.start(str(root), ["--notify", "none"])
        try:
            report: dict[str, object] = {"latency": latency(trees, args.handoffs)}
            burst = throughput(trees, args.burst, args.handoffs + 1)
            bare = bare_loop(Path(tmp) / "bare", args.burst * 3)
            burst["bare_files_per_s"] = round(bare, 1)
            burst["copies_vs_bare"] = round(float(burst["copies_per_s"]) / bare, 3)
            report["throughput"] = burst
            time.sleep(1.0)  # let the burst's aftermath settle before measuring idleness
            report["idle_cpu_percent"] = idle_cpu(pid, args.idle)
            report["idle_seconds"] = args.idle
        finally:
            stopping.stop(str(root))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    lat, thr = report["latency"], report["throughput"]
    assert isinstance(lat, dict) and isinstance(thr, dict)
    print(
        f"latency over {lat['count']} handoffs: p50 {lat['p50_ms']} ms (target <= 10), "
        f"p90 {lat['p90_ms']} ms, p99 {lat['p99_ms']} ms (target <= 50), max {lat['max_ms']} ms"
    )
    print(
        f"throughput, {thr['handoffs']} handoffs x 3 recipients: {thr['handoffs_per_s']} "
        f"handoffs/s = {thr['copies_per_s']} copies/s; bare write+fsync+rename loop "
        f"{thr['bare_files_per_s']} files/s (ratio {thr['copies_vs_bare']})"
    )
    print(
        f"idle CPU watching {len(ROLES)} roles for {report['idle_seconds']:.0f} s: "
        f"{report['idle_cpu_percent']}% of one core (target < 1%)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
