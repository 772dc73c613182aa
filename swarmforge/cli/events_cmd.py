"""`swarmforge events`: print the project's event log, and follow it.

`--follow` follows the running swarm: it prints events as they are appended and
ends once that swarm has stopped (its `swarm-down` event, or its session record saying
stopped, or its runner or tmux sessions gone). With no swarm running it prints what
is there and ends, saying so on stderr. `--forever` never ends on its own.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

from swarmforge.cli.common import emit, project_root
from swarmforge.cli.followedswarm import Swarm
from swarmforge.errors import EXIT_OK, SwarmforgeError
from swarmforge.projectroot import CHECKOUT, HERE, SWARM

POLL = 0.2  # seconds between looks at the log's size while following
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `events`."""
    p = sub.add_parser(
        "events",
        help="print the project's event log; --follow keeps printing new events",
        description="Print the project's event log (.swarmforge/events.jsonl): handoffs "
        "queued, delivered, taken and completed, agents started and exited, swarms up and "
        "down, planned runs' task states. Every kind and its fields: docs/events.md.",
        epilog="--follow ends when the running swarm stops; with no swarm running it "
        "prints what is there and ends. --forever never ends on its own (Ctrl-C).",
    )
    p.add_argument(
        "-f", "--follow", action="store_true", help="keep printing new events until the swarm stops"
    )
    p.add_argument("--forever", action="store_true", help="keep printing new events, never end")
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines, as stored")
    p.add_argument(
        "--since",
        metavar="T",
        help="only events at or after T: an ISO time (UTC unless it says otherwise) "
        "or a duration ago such as 30s, 10m, 2h, 1d",
    )
    p.add_argument(
        "--project", metavar="DIR", help="the project (default: found from the current directory)"
    )
    p.set_defaults(handler=_events)


def since_stamp(text: str, now: float) -> str:
    """The event time (times.precise) that `--since text` means at `now`."""
    from swarmforge import times

    match = DURATION.fullmatch(text.strip())
    if match:
        when = now - float(match[1]) * UNITS[match[2]]
    else:
        try:
            when = times.parse(text.strip())  # UTC unless it says otherwise, as the log's times
        except ValueError:
            raise SwarmforgeError(
                f"--since {text}: neither an ISO time (2026-06-15T14:05:31Z) "
                "nor a duration (30s, 10m, 2h, 1d)."
            ) from None
    return times.precise(round(when * 1_000_000) * 1000)  # to the microsecond, rounded


def _events(ns: argparse.Namespace) -> int:
    from swarmforge import eventline, eventread, events

    # Without a swarm, the checkout or the directory: planned runs log their events all the same.
    root = os.path.realpath(project_root(ns.project, (SWARM, CHECKOUT, HERE)))
    path = events.log_path(root)
    since = since_stamp(ns.since, time.time()) if ns.since else None
    swarm = Swarm(root) if ns.follow and not ns.forever else None
    if swarm is not None and swarm.run_id is None:
        print(
            f"no swarm is running in {root}: printing what is there (--forever waits for more)",
            file=sys.stderr,
        )
        swarm = None
    following = ns.forever or swarm is not None
    offset = lines = shown = 0
    draining = False
    while True:
        before = offset
        # A megabyte at a time: a long log is printed without being held whole.
        chunk = eventread.read(path, offset, lines, limit=1 << 20)
        offset, lines = chunk.end, chunk.lines
        for number, why in chunk.bad:
            print(f"{path}, line {number}: {why}, skipped", file=sys.stderr, flush=True)
        for event in chunk.events:
            if since is None or str(event["ts"]) >= since:
                emit(ns.json, event, eventline.line(event), line=True, flush=following)
                shown += 1
        if swarm is not None and not draining and swarm.ended(chunk.events):
            draining = True  # read on to the end: what was appended while it stopped
        if offset > before:
            continue  # there may be more already: read on before waiting or ending
        if not following or draining:
            if not shown and not ns.json:
                what = "no events" if not lines else f"no events since {since}"
                print(f"{what} in {path}", file=sys.stderr)
            return EXIT_OK
        _wait(path, offset)


def _wait(path: str, offset: int) -> None:
    """Sleep until the log grows past `offset`, or POLL seconds."""
    from swarmforge.waiting import wait_until

    log = Path(path)

    def grown() -> bool:
        try:
            return log.stat().st_size > offset
        except OSError:
            return False

    wait_until(grown, POLL, 0.05)
