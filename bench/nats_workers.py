"""Planned runs over workers: 1,000 `true` tasks through NATS and two workers, against
the local engine, measured in the same run.

  local    the run's 1,000 independent tasks with concurrency 8 on this machine
           (the orchestrator, its journal and reports; as bench/run.py)
  workers  the same tasks (a spec of its own, so a fresh run) with `--workers`:
           published to the task stream of a local nats-server, taken by two
           `swarmforge worker` processes on this machine, each running `--jobs`
           tasks at a time (one by default),
           their results read back, the reports written

    .venv/bin/python bench/nats_workers.py [--tasks 1000] [--reps 3] [--workers 2] [--jobs 1]
        [--json]

Each repetition runs both sides back to back; the figure to quote is the median of
the per-repetition ratios (workers / local). A worker's cost per task is a fetch, a
look for an earlier result, the command, the result written, an acknowledgement,
each a round trip to the server; the workers run in a scratch checkout of their
own clone of the hub (a bare repository in the temporary directory).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import git

from swarmforge.config.transportsettings import TransportSettings
from swarmforge.run.orchestrator import Orchestrator
from swarmforge.run.remote.sender import Workers
from swarmforge.run.spec.runspec import RunSpec

SERVER = Path(sys.executable).with_name("nats-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spec(tasks: int, nonce: str) -> RunSpec:
    return RunSpec.model_validate(
        {
            "goal": f"bench {nonce}",
            "maxConcurrency": 8,
            "tasks": [{"id": f"t{i}", "command": ["true"]} for i in range(tasks)],
        }
    )


def timed(root: Path, run: RunSpec, workers: Workers | None, tasks: int) -> float:
    start = time.perf_counter()
    result = Orchestrator(str(root), run, workers=workers).run()
    elapsed = time.perf_counter() - start
    assert result.counts.get("done") == tasks, result.counts
    return elapsed


def wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                if conn.recv(4).startswith(b"INFO"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nats-server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=1, help="tasks each worker runs at a time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        port = free_port()
        log = (tmp / "nats.log").open("wb")  # open for the server's life
        server = subprocess.Popen(
            [str(SERVER), "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(tmp / "js")],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        workers: list[subprocess.Popen[bytes]] = []
        try:
            wait_for_port(port)
            root, hub, url = tmp / "project", tmp / "hub.git", f"nats://127.0.0.1:{port}"
            root.mkdir()
            git(root, "init", "-q", "-b", "main")
            (root / "README").write_text("bench\n")
            git(root, "add", "README")
            git(root, "commit", "-q", "-m", "init")
            git(tmp, "init", "-q", "--bare", str(hub))
            settings = TransportSettings(url=url, hub=str(hub))
            for n in range(args.workers):
                argv = [sys.executable, "-m", "swarmforge", "worker", "--nats", url]
                argv += ["--hub", str(hub), "--dir", str(tmp / f"w{n}"), "--jobs", str(args.jobs)]
                workers.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL))
            local, remote = [], []
            for rep in range(args.reps):
                local.append(timed(root, spec(args.tasks, f"l{rep}"), None, args.tasks))
                remote.append(
                    timed(root, spec(args.tasks, f"w{rep}"), Workers(settings), args.tasks)
                )
        finally:
            for worker in workers:
                worker.send_signal(signal.SIGTERM)
            for worker in workers:
                worker.wait(timeout=30)
            server.terminate()
            server.wait(timeout=30)
            log.close()
    ratios = sorted(r / loc for r, loc in zip(remote, local, strict=True))
    report = {
        "tasks": args.tasks,
        "reps": args.reps,
        "workers": args.workers,
        "jobs": args.jobs,
        "local_s": round(statistics.median(local), 3),
        "workers_s": round(statistics.median(remote), 3),
        "ratio": round(statistics.median(ratios), 2),
        "ratios": [round(r, 2) for r in ratios],
        "per_task_ms": round(statistics.median(remote) / args.tasks * 1000, 2),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{args.tasks} tasks `true`, concurrency 8, {args.reps} repetitions: local median "
            f"{report['local_s']} s, over {args.workers} workers x {args.jobs} job(s) median "
            f"{report['workers_s']} s "
            f"({report['per_task_ms']} ms a task); median ratio {report['ratio']} "
            f"(range {report['ratios'][0]}..{report['ratios'][-1]})"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("GIT_TERMINAL_PROMPT", "0")
    sys.exit(main())
