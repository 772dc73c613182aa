"""Resuming a planned run: how long `resume_states` takes over a long journal.

Builds a run whose events.jsonl holds N events (default 100,000): task-enqueued
for every task, then task-state changes over 2,000 task ids, with a checkpoint
event every 10,000 events (the last one 5,000 events before the end, so
resume replays them). checkpoint.json is left one checkpoint behind, as a
crash between the event and the file would leave it, so resume starts from the
last checkpoint event and replays what follows. The median of several resumes is
printed next to the budget (2 s), with a bare `json.loads` of every line as the
floor any validating reader stands on (also with the cyclic collector paused, as
the reader pauses it).

  .venv/bin/python bench/resume.py [--events 100000] [--tasks 2000] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from swarmforge.run.journal.checkpoint import write_checkpoint
from swarmforge.run.journal.events import EVENT
from swarmforge.run.journal.file import EVENTS, read_events
from swarmforge.run.journal.replay import resume_states

BUDGET = 2.0
CHECKPOINT_EVERY = 10_000
STATUSES = ("ready", "running", "done", "failed")


def build(run_dir: str, events: int, tasks: int) -> dict[str, str]:
    """Write the journal (and a stale checkpoint.json); the states a resume must find."""
    rng = random.Random(7)
    ids = [f"task-{i:05d}" for i in range(tasks)]
    states: dict[str, str] = {}
    saved: tuple[int, dict[str, str]] | None = None
    lines: list[bytes] = []
    for seq in range(1, events + 1):
        fields: dict[str, object]
        if seq == 1:
            fields = {"kind": "run-started", "runId": "bench", "goal": "resume", "tasks": tasks}
        elif seq - 2 < tasks:
            fields = {"kind": "task-enqueued", "id": ids[seq - 2], "status": "blocked"}
            states[ids[seq - 2]] = "blocked"
        elif seq % CHECKPOINT_EVERY == CHECKPOINT_EVERY // 2:
            fields = {"kind": "checkpoint", "states": dict(states), "parked": []}
            saved = (seq, dict(states)) if seq + CHECKPOINT_EVERY <= events else saved
        else:
            task, status = rng.choice(ids), rng.choice(STATUSES)
            fields = {"kind": "task-state", "id": task, "status": status, "pid": 4242}
            states[task] = status
        event = EVENT.validate_python({"seq": seq, "ts": "2026-06-15T14:05:31.123Z", **fields})
        lines.append(event.model_dump_json().encode())
    Path(run_dir, EVENTS).write_bytes(b"\n".join(lines) + b"\n")
    if saved is not None:
        write_checkpoint(run_dir, saved[0], saved[1], [])
    return states


def timed(action: Callable[[], object], repeat: int) -> float:
    """The median wall time of `repeat` calls of `action`."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bare_json(path: Path, collect: bool = True) -> None:
    """json.loads of every line, with the cyclic collector on (as is) or paused (as the reader)."""
    lines = path.read_bytes().split(b"\n")[:-1]
    if not collect:
        gc.disable()
    try:
        for line in lines:
            json.loads(line)
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as run_dir:
        expected = build(run_dir, args.events, args.tasks)
        path = Path(run_dir, EVENTS)
        states, journal = resume_states(run_dir)
        assert states == expected and journal.next_seq == args.events + 1, "resume is wrong"
        result = {
            "events": args.events,
            "tasks": args.tasks,
            "journal_mb": round(path.stat().st_size / 2**20, 1),
            "resume_s": timed(lambda: resume_states(run_dir), args.repeat),
            "read_events_s": timed(lambda: read_events(str(path)), args.repeat),
            "json_loads_s": timed(lambda: bare_json(path), args.repeat),
            "json_loads_gc_paused_s": timed(lambda: bare_json(path, False), args.repeat),
            "budget_s": BUDGET,
        }
    result["ratio_to_json_loads"] = round(result["resume_s"] / result["json_loads_s"], 2)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"journal: {args.events} events over {args.tasks} tasks, {result['journal_mb']} MiB")
    print(f"resume_states   {result['resume_s']:.3f} s  (budget {BUDGET:.1f} s)")
    print(f"read_events     {result['read_events_s']:.3f} s")
    ratio = result["ratio_to_json_loads"]
    print(f"bare json.loads {result['json_loads_s']:.3f} s  (resume takes x{ratio} of it)")
    print(f"  same, gc paused {result['json_loads_gc_paused_s']:.3f} s")


if __name__ == "__main__":
    main()
