"""Start-up cost of the agent-facing helpers against the bare interpreter they run on.

Budget (the helpers are called many times an hour by every agent):
  ready_for_next.sh with one queued item  <= 2.5 x  `<python> -c pass`
  swarm_handoff.sh (a git_handoff draft)  <= 3.0 x  `<python> -c pass`

All three are measured interleaved in the same run, several repetitions each,
and medians are compared, because machines here are shared and noisy. With
`--against DIR`, a checkout of an earlier commit with its own .venv (./setup.sh
there), its helpers are measured in the same rounds, each against its own bare
interpreter: a before and after of one run.

    .venv/bin/python bench/helpers.py [--reps N] [--against DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import git  # bench/ is the script's directory, first on sys.path

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "bin"
BUDGET = {"ready_for_next.sh": 2.5, "swarm_handoff.sh": 3.0}


def interpreter(checkout: Path) -> str:
    """The interpreter the wrappers of `checkout` exec (bin/_swarmforge.sh's resolution)."""
    venv = checkout / ".venv" / "bin" / "python"
    if checkout == REPO:
        return os.environ.get("SWARMFORGE_PYTHON") or (
            str(venv) if venv.exists() else sys.executable
        )
    if not venv.exists():
        raise SystemExit(f"{checkout} has no .venv: run ./setup.sh there first")
    return str(venv)


def setup(base: Path) -> tuple[Path, str]:
    """A project with a sender (coder) and a receiver (qa) in the main checkout."""
    git(base, "init", "-q", "-b", "main")
    (base / "f").write_text("x\n")
    git(base, "add", "f")
    git(base, "commit", "-q", "-m", "init")
    (base / ".swarmforge").mkdir()
    (base / ".swarmforge" / "roles.tsv").write_text(
        f"coder\tmaster\t{base}\tswarmforge-coder\tCoder\tcodex\ttask\n"
        f"qa\tmaster\t{base}\tswarmforge-qa\tQa\tcodex\ttask\n"
    )
    return base, git(base, "rev-parse", "--short=10", "HEAD")


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {result.stderr.decode()}")
    return elapsed


ITEM = (
    "id: x\nfrom: qa\nto: coder\npriority: 50\ntype: note\nmessage: m\n"
    "created_at: 2026-01-01T00:00:00Z\nrecipient: coder\n"
    "enqueued_at: 2026-01-01T00:00:01Z\n\nRe-read your role and constitution.\n\nm\n"
)


def measure(reps: int, checkouts: dict[str, Path]) -> dict[str, object]:
    """Median times of each checkout's helpers and bare interpreter, rounds interleaved."""
    samples: dict[str, dict[str, list[float]]] = {
        label: {"bare": [], **{name: [] for name in BUDGET}} for label in checkouts
    }
    pythons = {label: interpreter(checkout) for label, checkout in checkouts.items()}
    with tempfile.TemporaryDirectory() as tmp:
        project, commit = setup(Path(tmp))
        handoffs = project / ".swarmforge" / "handoffs"
        new, in_process = handoffs / "inbox" / "new", handoffs / "inbox" / "in_process"
        new.mkdir(parents=True)
        draft = project / "draft"
        for _ in range(reps):
            for label, checkout in checkouts.items():
                python, bin_dir, mine = pythons[label], checkout / "bin", samples[label]
                env = {"PATH": f"{Path(python).parent}:/usr/bin:/bin", "SWARMFORGE_ROLE": "coder"}
                mine["bare"].append(timed([python, "-c", "pass"], project, env))
                shutil.rmtree(in_process, ignore_errors=True)
                (new / "50_20260101T000000Z_000001_from_qa_to_coder.handoff").write_text(ITEM)
                mine["ready_for_next.sh"].append(
                    timed([str(bin_dir / "ready_for_next.sh")], project, env)
                )
                draft.write_text(
                    f"type: git_handoff\nto: qa\npriority: 50\ntask: bench\ncommit: {commit}\n"
                )
                mine["swarm_handoff.sh"].append(
                    timed([str(bin_dir / "swarm_handoff.sh"), "draft"], project, env)
                )
    report: dict[str, object] = {"reps": reps, "budget": BUDGET}
    for label, found in samples.items():
        medians = {k: statistics.median(v) * 1000 for k, v in found.items()}
        ratios = {k: round(medians[k] / medians["bare"], 2) for k in BUDGET}
        report[label] = {
            "checkout": str(checkouts[label]),
            "python": pythons[label],
            "median_ms": {k: round(v, 2) for k, v in medians.items()},
            "ratio": ratios,
            "within_budget": all(ratios[k] <= b for k, b in BUDGET.items()),
        }
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=60, help="repetitions of each (default 60)")
    parser.add_argument(
        "--against", type=Path, help="a checkout of an earlier commit, with its .venv"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    checkouts = {"this": REPO}
    if args.against is not None:
        checkouts["against"] = args.against.resolve()
    report = measure(args.reps, checkouts)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.reps} rounds, interleaved; medians")
    for label in checkouts:
        found = report[label]
        assert isinstance(found, dict)
        medians, ratios = found["median_ms"], found["ratio"]
        print(f"{label}: {found['checkout']} ({found['python']})")
        print(f"  bare `python -c pass`      {medians['bare']:7.2f} ms")
        for name, budget in BUDGET.items():
            verdict = "ok" if ratios[name] <= budget else "OVER BUDGET"
            print(
                f"  {name:26s} {medians[name]:7.2f} ms  ratio {ratios[name]:4.2f} "
                f"(budget {budget:.1f})  {verdict}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
