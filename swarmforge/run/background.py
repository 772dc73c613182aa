"""Background workers: detached processes that outlive the orchestrator.

The orchestrator finds a background worker's outcome again through its report
file, and whether it still runs through its pid.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from swarmforge import filewrite
from swarmforge.proc import detach
from swarmforge.run.commandtask import run_command


def pid_file(reports: str, task_id: str) -> Path:
    """Where a background worker records its pid while it runs."""
    return Path(reports) / f"{task_id}.pid"


def start_background(
    task_id: str,
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    reports: str,
) -> int:
    """Start a detached worker for `argv`; its pid.

    The pid is the shell's `$!`, known at once: a worker that ends within
    milliseconds has removed its pid file before anyone could read it.
    """
    Path(reports).mkdir(parents=True, exist_ok=True)
    marker = pid_file(reports, task_id)
    if marker.exists():
        marker.unlink()  # a killed earlier attempt's: the new worker writes its own
    wrapper = [
        sys.executable,
        "-m",
        "swarmforge",
        "run-worker",
        "--reports",
        reports,
        "--task",
        task_id,
        "--cwd",
        cwd,
        "--",
        *argv,
    ]
    return detach.detach(wrapper, env=env)  # adopted by init: it outlives us


def background_main(reports: str, task_id: str, cwd: str, argv: list[str]) -> int:
    """The detached worker itself: run the command, write the report, drop the pid file."""
    marker = pid_file(reports, task_id)
    filewrite.atomic_write(str(marker), f"{os.getpid()}\n".encode())
    try:
        outcome = run_command(
            task_id,
            argv,
            cwd=cwd,
            env=dict(os.environ),
            reports=reports,
            extra={"background": True, "pid": os.getpid()},
            durable=True,  # for a background task the report is where its outcome is found
        )
    finally:
        if marker.exists():
            marker.unlink()
    return 0 if outcome.ok else 1
