"""Start-up cost of everyday `swarmforge` commands against the bare interpreter they run on.

A project with a stopped headless swarm of two exec roles (its records, worktrees and
logs in place) is made in a temporary directory; then `status`, `status --json`,
`events --json`, `port BRANCH` and `--help` are run there, interleaved with
`<python> -c pass`, several repetitions each. Medians and their ratio to the bare
interpreter are printed: what a user waits for each time, and what every test that
runs a command pays.

    .venv/bin/python bench/commands.py [--reps N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import git, timed  # bench/ is the script's directory, first on sys.path

REPO = Path(__file__).resolve().parents[1]
SWARMFORGE = str(REPO / ".venv" / "bin" / "swarmforge")
CONF = "window alpha exec alpha task cat\nwindow beta exec beta batch cat\n"
COMMANDS = {
    "status": ["status"],
    "status --json": ["status", "--json"],
    "events --json": ["events", "--json"],
    "port BRANCH": ["port", "swarm/bench/alpha"],
    "--help": ["--help"],
}


def project(work: Path) -> Path:
    """A repository with a swarm of two exec roles, started and stopped once."""
    repo = work / "project"
    (repo / "swarmforge" / "roles").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "swarmforge" / "swarmforge.conf").write_text(CONF)
    (repo / "swarmforge" / "constitution.prompt").write_text("Work.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "swarm")
    for args in (["up", "--backend", "headless"], ["down"]):
        subprocess.run([SWARMFORGE, *args], cwd=repo, check=True, capture_output=True)
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15, help="runs of each (default 15)")
    parser.add_argument("--json", action="store_true", help="print the medians as JSON")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="swarmforge-bench-commands-") as work:
        repo = project(Path(work))
        runs: dict[str, list[float]] = {"python -c pass": [], **{name: [] for name in COMMANDS}}
        for _ in range(ns.reps):
            runs["python -c pass"].append(timed([sys.executable, "-c", "pass"], repo))
            for name, args in COMMANDS.items():
                runs[name].append(timed([SWARMFORGE, *args], repo))
    medians = {name: statistics.median(samples) for name, samples in runs.items()}
    bare = medians["python -c pass"]
    if ns.json:
        print(json.dumps({"reps": ns.reps, "median_s": medians}, indent=2))
        return 0
    print(f"{ns.reps} runs of each, interleaved; medians and ratio to the bare interpreter")
    for name, median in medians.items():
        print(f"  {name:<16} {median * 1000:7.1f} ms  {median / bare:6.1f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
