"""Workers: what runs one task of a planned run and reports how it ended.

A command worker runs the task's argv (no shell) and is done on exit 0,
failed otherwise; its stdout and stderr are kept in the report. A background
worker is a detached process that survives the orchestrator; the orchestrator
finds its outcome again through the report file. Reports are written as
`<taskId>.report.md` and renamed to `.complete.md` or `.failed.md`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from swarmforge import fsutil, proc
from swarmforge.run.report.files import find_report
from swarmforge.run.report.markdown import TAIL
from swarmforge.run.report.parse import read_report
from swarmforge.run.report.publish import write_report

# on_worktree(action, path, branch, rescued commit or None)
WorktreeEvent = Callable[[str, str, str, "str | None"], None]


class Outcome:
    """How a task's worker ended."""

    __slots__ = ("exit_code", "ok", "report", "task_id")

    def __init__(self, task_id: str, ok: bool, exit_code: int | None, path: str | None) -> None:
        self.task_id = task_id
        self.ok = ok
        self.exit_code = exit_code
        self.report = path


def run_command(
    task_id: str,
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    reports: str,
    extra: dict[str, object] | None = None,
    durable: bool = False,
) -> Outcome:
    """Run `argv` to completion and write its report."""
    code, out, err, error = None, b"", b"", None
    try:
        done = proc.output(argv, cwd=cwd, env=env)
        code, out, err = done.returncode, done.stdout, done.stderr
    except OSError as exc:
        error = exc
    return ended(
        task_id,
        argv,
        cwd=cwd,
        reports=reports,
        code=code,
        out=out,
        err=err,
        error=error,
        extra=extra,
        durable=durable,
    )


def ended(
    task_id: str,
    argv: list[str],
    *,
    cwd: str,
    reports: str,
    code: int | None = None,
    out: bytes = b"",
    err: bytes = b"",
    error: OSError | None = None,
    extra: dict[str, object] | None = None,
    durable: bool = False,
    first: bool = False,
) -> Outcome:
    """Write the report of a command that exited with `code` (or could not start: `error`).

    The orchestrator journals a command worker's outcome durably right after, so its
    report is not fsynced (`durable`): that halves the cost of a short task.
    """
    data: dict[str, object] = {"command": argv, "cwd": cwd, **(extra or {})}
    if error is not None:
        code, out = None, b""
        data["error"] = f"cannot run {argv[0]}: {error.strerror}"
        err = f"{data['error']}\n".encode()
    data["exitCode"] = code
    ok = code == 0
    path = write_report(
        reports,
        task_id,
        data,
        ok,
        out[-TAIL:],
        err[-TAIL:],
        durable=durable,
        first=first,
    )
    return Outcome(task_id, ok, code, path)


def run_isolated(
    root: str,
    run_id: str,
    task_id: str,
    argv: list[str],
    *,
    env: dict[str, str],
    reports: str,
    port: int,
    on_worktree: WorktreeEvent,
) -> Outcome:
    """Run `argv` in the task's own worktree, removed (work rescued) however it ends."""
    from swarmforge.git.isolation import isolated

    with isolated(root, run_id, task_id, port=port) as iso:
        on_worktree("created", iso.path, iso.branch, None)
        env = {**env, "PORT": str(iso.port), "SWARMFORGE_PORT": str(iso.port)}
        outcome = run_command(
            task_id,
            argv,
            cwd=iso.path,
            env=env,
            reports=reports,
            extra={"worktree": iso.path, "branch": iso.branch, "port": iso.port},
        )
    on_worktree("removed", iso.path, iso.branch, iso.removal.rescued if iso.removal else None)
    return outcome


def pid_file(reports: str, task_id: str) -> str:
    """Where a background worker records its pid while it runs."""
    return os.path.join(reports, f"{task_id}.pid")


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
    os.makedirs(reports, exist_ok=True)
    marker = pid_file(reports, task_id)
    if os.path.exists(marker):
        os.unlink(marker)  # a killed earlier attempt's: the new worker writes its own
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
    return proc.detach(wrapper, env=env)  # adopted by init: it outlives us


def background_main(reports: str, task_id: str, cwd: str, argv: list[str]) -> int:
    """The detached worker itself: run the command, write the report, drop the pid file."""
    marker = pid_file(reports, task_id)
    fsutil.atomic_write(marker, f"{os.getpid()}\n".encode())
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
        if os.path.exists(marker):
            os.unlink(marker)
    return 0 if outcome.ok else 1


def finished(reports: str, task_id: str) -> Outcome | None:
    """The outcome of a task whose report is written, or None while it is not."""
    path = find_report(reports, task_id)
    if path is None:
        return None
    found = read_report(path)
    return Outcome(task_id, found.ok, found.exitCode, path)
