"""Start-up cost of the agent-facing helpers against the bare interpreter they run on.

Budget (the helpers are called many times an hour by every agent):
  ready_for_next.sh with one queued item  <= 2.5 x  `<python> -c pass`
  swarm_handoff.sh (a git_handoff draft)  <= 3.0 x  `<python> -c pass`

All three are measured interleaved in the same run, several repetitions each,
and medians are compared, because machines here are shared and noisy.

    .venv/bin/python bench/helpers.py [--reps N] [--json]
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


def interpreter() -> str:
    """The interpreter the wrappers exec (the same resolution as bin/_swarmforge.sh)."""
    venv = REPO / ".venv" / "bin" / "python"
    return os.environ.get("SWARMFORGE_PYTHON") or (str(venv) if venv.exists() else sys.executable)


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


def measure(reps: int) -> dict[str, object]:
    python = interpreter()
    env = {"PATH": f"{Path(python).parent}:/usr/bin:/bin", "SWARMFORGE_ROLE": "coder"}
    samples: dict[str, list[float]] = {"bare": [], "ready_for_next.sh": [], "swarm_handoff.sh": []}
    with tempfile.TemporaryDirectory() as tmp:
        project, commit = setup(Path(tmp))
        handoffs = project / ".swarmforge" / "handoffs"
        new, in_process = handoffs / "inbox" / "new", handoffs / "inbox" / "in_process"
        new.mkdir(parents=True)
        item = (
            "id: x\nfrom: qa\nto: coder\npriority: 50\ntype: note\nmessage: m\n"
            "created_at: 2026-01-01T00:00:00Z\nrecipient: coder\n"
            "enqueued_at: 2026-01-01T00:00:01Z\n\nRe-read your role and constitution.\n\nm\n"
        )
        draft = project / "draft"
        for _ in range(reps):
            samples["bare"].append(timed([python, "-c", "pass"], project, env))
            shutil.rmtree(in_process, ignore_errors=True)
            (new / "50_20260101T000000Z_000001_from_qa_to_coder.handoff").write_text(item)
            samples["ready_for_next.sh"].append(
                timed([str(BIN / "ready_for_next.sh")], project, env)
            )
            draft.write_text(
                f"type: git_handoff\nto: qa\npriority: 50\ntask: bench\ncommit: {commit}\n"
            )
            samples["swarm_handoff.sh"].append(
                timed([str(BIN / "swarm_handoff.sh"), "draft"], project, env)
            )
    medians = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    report: dict[str, object] = {
        "python": python,
        "reps": reps,
        "median_ms": {k: round(v, 2) for k, v in medians.items()},
    }
    report["ratio"] = {k: round(medians[k] / medians["bare"], 2) for k in BUDGET}
    report["budget"] = BUDGET
    report["within_budget"] = all(medians[k] / medians["bare"] <= b for k, b in BUDGET.items())
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=60, help="repetitions of each (default 60)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    report = measure(args.reps)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    medians = report["median_ms"]
    assert isinstance(medians, dict)
    print(f"interpreter: {report['python']}  ({args.reps} repetitions, medians)")
    print(f"  bare `python -c pass`      {medians['bare']:7.2f} ms")
    for name, budget in BUDGET.items():
        ratio = medians[name] / medians["bare"]
        verdict = "ok" if ratio <= budget else "OVER BUDGET"
        print(
            f"  {name:26s} {medians[name]:7.2f} ms  ratio {ratio:4.2f} "
            f"(budget {budget:.1f})  {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
