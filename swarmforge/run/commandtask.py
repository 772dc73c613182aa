"""Command workers: what runs one command task of a planned run and reports how it ended.

A command worker runs the task's argv (no shell) and is done on exit 0,
failed otherwise; its stdout and stderr are kept in the report. Reports are
written as `<taskId>.report.md` and renamed to `.complete.md` or `.failed.md`.
"""

from __future__ import annotations

from collections.abc import Callable

from swarmforge.proc import popen
from swarmforge.run.outcome import Outcome
from swarmforge.run.report.markdown import TAIL
from swarmforge.run.report.publish import write_report

# on_worktree(action, path, branch, rescued commit or None)
WorktreeEvent = Callable[[str, str, str, "str | None"], None]


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
        done = popen.output(argv, cwd=cwd, env=env)
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
