"""The event log's readers on a log holding one huge line: time and peak memory.

tail      the last 200 events, as `watch` and the cockpit open on the log
read      the whole log a megabyte at a time, as `swarmforge events` prints it

Each is measured in a child process of its own (time, and peak RSS from
/proc/self/status VmHWM), on a log of `--events` ordinary events, then on the same log
with one line of `--huge-mb` megabytes put among its last 200 lines: the ratios
say what one line costs. Memory should stay flat and time grow only with the bytes.

  .venv/bin/python bench/bigevents.py [--events 100000] [--huge-mb 100] [--reps 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from swarmforge import events

# Run in a child: its peak RSS is the reader's, not this script's.
CHILD = """
import json, re, sys, time
from swarmforge import eventread
path, how = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if how == "tail":
    chunk = eventread.tail(path, 200)
    shown, skipped = len(chunk.events), len(chunk.bad)
else:
    offset = lines = shown = skipped = 0
    while True:
        chunk = eventread.read(path, offset, lines, limit=1 << 20)
        if chunk.end == offset:
            break
        offset, lines = chunk.end, chunk.lines
        shown += len(chunk.events)
        skipped += len(chunk.bad)
seconds = time.perf_counter() - start
# VmHWM of this process: ru_maxrss would keep the peak of the parent it was forked from.
with open("/proc/self/status") as status:
    peak = int(re.search(r"VmHWM:\\s+(\\d+)", status.read())[1])  # KiB
print(json.dumps({"seconds": seconds, "peak_kib": peak, "events": shown, "skipped": skipped}))
"""


def write_log(path: Path, count: int, huge_mb: int) -> None:
    """`count` events of about 120 bytes; with `huge_mb`, one line that long 100 lines
    before the end (among the last 200, so that `tail` crosses it)."""
    with path.open("wb") as f:
        for n in range(count):
            if huge_mb and n == count - 100:
                chunk = b"x" * (1 << 20)
                f.write(events.START)
                for _ in range(huge_mb):
                    f.write(chunk)
                f.write(b'"}\n')
            f.write(events.encode("step", {"n": n, "pad": "p" * 40}, "2026-06-15T14:05:31Z"))


def measure(path: Path, how: str, reps: int) -> dict[str, float]:
    """The median time and peak RSS of `reps` runs of reader `how` on `path`."""
    runs = []
    for _ in range(reps):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), how], check=True, capture_output=True
        )
        runs.append(json.loads(done.stdout))
    return {
        "seconds": round(statistics.median(r["seconds"] for r in runs), 4),
        "peak_mib": round(statistics.median(r["peak_kib"] for r in runs) / 1024, 1),
        "events": runs[0]["events"],
        "skipped": runs[0]["skipped"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="ordinary events (100000)")
    parser.add_argument("--huge-mb", type=int, default=100, help="the huge line's MB (100)")
    parser.add_argument("--reps", type=int, default=3, help="runs of each, median kept (3)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        plain, huge = Path(tmp) / "plain.jsonl", Path(tmp) / "huge.jsonl"
        write_log(plain, args.events, 0)
        write_log(huge, args.events, args.huge_mb)
        for how in ("tail", "read"):
            without, with_huge = measure(plain, how, args.reps), measure(huge, how, args.reps)
            report[how] = {
                "without": without,
                "with": with_huge,
                "time_ratio": round(with_huge["seconds"] / max(without["seconds"], 1e-6), 1),
                "memory_ratio": round(with_huge["peak_mib"] / without["peak_mib"], 2),
            }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"a log of {args.events:,} events, then the same with one {args.huge_mb} MB line")
    for how, found in report.items():
        without, with_huge = found["without"], found["with"]
        assert isinstance(without, dict) and isinstance(with_huge, dict)
        print(
            f"{how:5s} {without['seconds'] * 1000:.1f} ms, {without['peak_mib']} MiB; "
            f"with it {with_huge['seconds'] * 1000:.1f} ms, {with_huge['peak_mib']} MiB "
            f"(time x{found['time_ratio']}, memory x{found['memory_ratio']}; "
            f"{with_huge['events']} events, {with_huge['skipped']} line(s) skipped)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
