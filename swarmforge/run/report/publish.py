"""Writing a task's report and publishing it by a rename, the rename being the commit."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from swarmforge import filewrite, fsutil
from swarmforge.errors import SwarmforgeError
from swarmforge.run.fields import utc_stamp
from swarmforge.run.report.files import COMPLETE, FAILED, STAGED, check_name
from swarmforge.run.report.markdown import render

RESERVED = ("taskId", "ok", "finishedAt")


def write_report(
    reports_dir: str,
    task_id: str,
    data: Mapping[str, object],
    ok: bool,
    stdout: bytes = b"",
    stderr: bytes = b"",
    *,
    durable: bool = True,
    first: bool = False,
) -> str:
    """Write and publish the report of `task_id`; the path of the `.complete.md` or `.failed.md`.

    `durable=False` skips the fsyncs, for a report whose outcome the journal records
    durably anyway (a command worker's): it still appears whole or not at all to any
    process, and only a machine crash could cost it. `first=True` says the caller knows
    that no earlier attempt left an outcome, which spares a look for one.
    """
    check_name(task_id)
    taken = [key for key in RESERVED if key in data]
    if taken:
        raise SwarmforgeError(f"The report of task {task_id} may not set {', '.join(taken)}.")
    payload: dict[str, object] = {"taskId": task_id, "ok": ok}
    if "exitCode" in data:
        code = payload["exitCode"] = data["exitCode"]
        # What `Report` would refuse on reading back; the rest is ours, or free-form.
        if code is not None and type(code) is not int:
            raise SwarmforgeError(
                f"The report of task {task_id} is invalid: exitCode must be an integer "
                f"or null, not {code!r}."
            )
    payload["finishedAt"] = utc_stamp()
    payload.update((k, v) for k, v in data.items() if k != "exitCode")
    try:
        text = render(task_id, payload, ok, stdout, stderr)
    except (TypeError, ValueError) as exc:
        raise SwarmforgeError(f"The report of task {task_id} is not JSON: {exc}") from None
    directory = Path(reports_dir)
    staged = directory / (task_id + STAGED)
    _stage(staged, text.encode(), durable)
    final = directory / (task_id + (COMPLETE if ok else FAILED))
    stale = directory / (task_id + (FAILED if ok else COMPLETE))
    if not first and stale.exists():
        # An earlier attempt's outcome; the unlink must be durable before the new one
        # appears, or a crash could leave the task with two outcomes.
        stale.unlink()
        fsutil.fsync_dir(reports_dir)
    staged.replace(final)
    if durable:
        fsutil.fsync_dir(reports_dir)
    return str(final)


def _stage(staged: Path, data: bytes, durable: bool) -> None:
    # Try first, repair after: the reports directory is there and nothing is left
    # behind nearly always, and every check costs a system call per task.
    try:
        filewrite.write_new(str(staged), data, durable=durable)
    except FileNotFoundError:
        staged.parent.mkdir(parents=True, exist_ok=True)
        filewrite.write_new(str(staged), data, durable=durable)
    except FileExistsError:
        staged.unlink()  # left by a worker that died before it finished
        filewrite.write_new(str(staged), data, durable=durable)
