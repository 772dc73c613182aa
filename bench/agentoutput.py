"""A role's output log played to screen text, as both views show it.

render   roletexts.output on a 1 MB agent log (the end it reads, at most OUTPUT_BYTES,
         played through the terminal emulator to the last 200 lines): the median time
         per render over --runs renders, against the period the views read the swarm in
         (feed.EVERY) and the least time between two renders of a growing log in the
         cockpit (OUTPUT_EVERY)
whole    the same log played whole, once: what the emulator costs per megabyte

The log is made like the ones claude and codex leave: titles, clears, colours, cursor
moves, erased lines, braille spinners redrawn with "\r", and lines of text.

Budget: a render takes well under the refresh period (below 10% of feed.EVERY), so a
view that shows a busy agent's output stays responsive.

  .venv/bin/python bench/agentoutput.py [--runs 15] [--megabytes 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from swarmforge import statedir
from swarmforge.layout import LOGS_DIR
from swarmforge.views import roletexts
from swarmforge.views.cockpit.roles import OUTPUT_EVERY
from swarmforge.views.feed import EVERY
from swarmforge.views.terminal import screen_lines

WORDS = [
    "the",
    "parser",
    "reads",
    "each",
    "token",
    "and",
    "returns",
    "a",
    "tree",
    "of",
    "nodes",
    "with",
    "their",
    "spans",
]
SPINNER = "⣾⣽⣻⢿⡿⣟⣯⣷"


def burst(rng: random.Random) -> str:
    """One redraw as an agent's terminal gets it: a title, a spinner, a few lines of text."""
    parts = [f"\x1b]2;agent {rng.randrange(100)}\x07"]
    if rng.random() < 0.05:
        parts.append("\x1b[2J\x1b[H")
    for frame in rng.sample(SPINNER, 4):
        parts.append(
            f"\r\x1b[38;5;{rng.randrange(256)}m{frame}\x1b[0m Working ({rng.randrange(60)}s)"
        )
    parts.append("\x1b[K\r\n")
    for _ in range(rng.randrange(1, 6)):
        text = " ".join(rng.choices(WORDS, k=rng.randrange(3, 25)))
        parts.append(
            f"\x1b[2G\x1b[1m●\x1b[22m \x1b[38;2;120;200;{rng.randrange(256)}m{text}\x1b[39m"
        )
        parts.append(f"\x1b[{rng.randrange(2, 120)}G\x1b[2m…\x1b[0m\r\n")
    if rng.random() < 0.3:
        parts.append(f"\x1b[{rng.randrange(1, 8)}A\x1b[2K\x1b[3G\x1b[7m> \x1b[27m\x1b[B\r")
    return "".join(parts)


def agent_log(size: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    chunks, made = [], 0
    while made < size:
        chunk = burst(rng).encode()
        chunks.append(chunk)
        made += len(chunk)
    return b"".join(chunks)[:size]


def measure(root: Path, runs: int, size: int) -> dict[str, float]:
    data = agent_log(size)
    log = Path(statedir.path(str(root), LOGS_DIR), "coder.log")
    log.parent.mkdir(parents=True)
    log.write_bytes(data)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        roletexts.output(str(root), "coder")
        samples.append(time.perf_counter() - start)
    start = time.perf_counter()
    screen_lines(data, 200)
    whole = time.perf_counter() - start
    render_ms = statistics.median(samples) * 1000
    return {
        "log_bytes": len(data),
        "read_bytes": min(len(data), roletexts.OUTPUT_BYTES),
        "runs": runs,
        "render_p50_ms": round(render_ms, 1),
        "render_max_ms": round(max(samples) * 1000, 1),
        "refresh_s": EVERY,
        "ratio_to_refresh": round(render_ms / (EVERY * 1000), 4),
        "cockpit_every_s": OUTPUT_EVERY,
        "ratio_to_cockpit_every": round(render_ms / (OUTPUT_EVERY * 1000), 4),
        "whole_ms": round(whole * 1000, 1),
        "whole_ms_per_mb": round(whole * 1000 / (len(data) / 1e6), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="renders timed (15)")
    parser.add_argument("--megabytes", type=float, default=1.0, help="size of the log (1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        r = measure(Path(tmp), args.runs, int(args.megabytes * 1_000_000))
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(
        f"render: the last {r['read_bytes']:,} bytes of a {r['log_bytes']:,}-byte agent log "
        f"to screen text, {r['runs']} runs"
    )
    print(f"  median {r['render_p50_ms']} ms, max {r['render_max_ms']} ms")
    print(
        f"  ratio to the views' refresh period ({r['refresh_s']} s): {r['ratio_to_refresh']:.2%}"
        f"  (budget: well under it, below 10%)"
    )
    print(
        f"  ratio to the cockpit's least time between two renders ({r['cockpit_every_s']} s): "
        f"{r['ratio_to_cockpit_every']:.2%}"
    )
    print(f"whole: the {r['log_bytes']:,}-byte log played once: {r['whole_ms']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
