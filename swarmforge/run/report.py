"""Worker reports: Markdown with exactly one fenced JSON block, published by a rename.

A worker writes `<taskId>.report.md` and renames it to `<taskId>.complete.md` or
`<taskId>.failed.md`; the rename is the commit. A `.report.md` left behind means
the worker died before it finished, and nobody reads it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from swarmforge import fsutil
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.records import describe
from swarmforge.run.fields import Stamp, utc_stamp

TAIL = 64 * 1024
STAGED, COMPLETE, FAILED = ".report.md", ".complete.md", ".failed.md"
RESERVED = ("taskId", "ok", "finishedAt")

# CommonMark fences: up to three spaces, three or more backticks or tildes, an info string.
_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)\Z")
_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\Z")
_BACKTICKS = re.compile(r"`+")


class Report(BaseModel):
    """What a worker reported; fields beyond these are kept as they were written."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    taskId: str
    ok: bool
    exitCode: int | None = None
    finishedAt: Stamp


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
    _check_name(task_id)
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
    staged = os.path.join(reports_dir, task_id + STAGED)
    _stage(staged, text.encode(), durable)
    final = os.path.join(reports_dir, task_id + (COMPLETE if ok else FAILED))
    stale = os.path.join(reports_dir, task_id + (FAILED if ok else COMPLETE))
    if not first and os.path.exists(stale):
        # An earlier attempt's outcome; the unlink must be durable before the new one
        # appears, or a crash could leave the task with two outcomes.
        os.unlink(stale)
        fsutil.fsync_dir(reports_dir)
    os.replace(staged, final)
    if durable:
        fsutil.fsync_dir(reports_dir)
    return final


def _stage(staged: str, data: bytes, durable: bool) -> None:
    # Try first, repair after: the reports directory is there and nothing is left
    # behind nearly always, and every check costs a system call per task.
    try:
        fsutil.write_new(staged, data, durable=durable)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(staged), exist_ok=True)
        fsutil.write_new(staged, data, durable=durable)
    except FileExistsError:
        os.unlink(staged)  # left by a worker that died before it finished
        fsutil.write_new(staged, data, durable=durable)


def render(task_id: str, payload: Mapping[str, object], ok: bool, out: bytes, err: bytes) -> str:
    """The Markdown of a report: heading, the JSON block, then the tails of stdout and stderr."""
    parts = [
        f"# Task {task_id}: {'complete' if ok else 'failed'}\n",
        "```json\n" + _json(payload) + "\n```\n",
    ]
    for name, stream in (("stdout", out), ("stderr", err)):
        parts.append(_section(name, stream) if stream else _EMPTY[name])
    return "\n".join(parts)


def _section(name: str, stream: bytes) -> str:
    text, heading = _tail(stream), f"## {name}"
    if len(stream) > TAIL:
        heading += f" (last {TAIL} of {len(stream)} bytes)"
    # A fence longer than any run of backticks in the text: nothing inside can close it.
    fence = "`" * max(3, 1 + max(map(len, _BACKTICKS.findall(text)), default=0))
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{heading}\n\n{fence}text\n{body}{fence}\n"


def _json(payload: Mapping[str, object]) -> str:
    """One top-level field per line, each value in compact JSON.

    `json.dumps(indent=...)` falls back to the pure-Python encoder, which cost more
    than the rest of a short task's report put together.
    """
    if not payload:
        return "{}"
    if not all(isinstance(key, str) for key in payload):
        raise TypeError("report fields must be named by strings")
    fields = (f"  {_string(key)}: {_value(value)}" for key, value in payload.items())
    return "{\n" + ",\n".join(fields) + "\n}"


# One encoder for every field: json.dumps with options builds a new one per call.
_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": ")).encode
_string = json.encoder.encode_basestring
_SCALARS = {True: "true", False: "false", None: "null"}


def _value(value: object) -> str:
    """`_dumps(value)`, with the encoder's own set-up skipped for what a report holds most."""
    if value is None or isinstance(value, bool):
        return _SCALARS[value]
    if type(value) is str:
        return _string(value)
    if type(value) is int:
        return int.__repr__(value)  # as json does
    return _dumps(value)


def _tail(stream: bytes) -> str:
    tail = stream[-TAIL:]
    if len(stream) > TAIL:
        # Start on a character boundary rather than in the middle of a UTF-8 sequence.
        tail = tail[next((i for i, b in enumerate(tail[:4]) if b & 0xC0 != 0x80), 0) :]
    return tail.decode("utf-8", errors="replace")


_EMPTY = {name: _section(name, b"") for name in ("stdout", "stderr")}


def read_report(path: str) -> Report:
    """The validated report at `path`; CorruptFile naming the file and line if it is not one."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFile(path, raw[: exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    start, block = _json_block(path, text.split("\n"))
    try:
        report = Report.model_validate(json.loads(block))
    except json.JSONDecodeError as exc:
        raise CorruptFile(path, start + exc.lineno, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise CorruptFile(path, start + 1, "invalid JSON: nested too deeply") from None
    except ValidationError as exc:
        raise CorruptFile(path, start + 1, describe(exc)) from None
    _check_outcome(path, report)
    return report


def _json_block(path: str, lines: list[str]) -> tuple[int, str]:
    """The first line number and the text of the one ```json block of a report."""
    found: list[tuple[int, str]] = []
    number = 0
    while number < len(lines):
        opened = _OPEN.match(lines[number].rstrip("\r"))
        number += 1
        fence, info = opened.groups() if opened else ("", "")
        if not fence or (fence[0] == "`" and "`" in info):
            continue
        start = number
        body: list[str] = []
        while True:
            if number == len(lines):
                raise CorruptFile(path, start, "a fenced block opened here is never closed")
            line = lines[number].rstrip("\r")
            number += 1
            if _closes(line, fence):
                break
            body.append(line)
        if info.lower().split()[:1] == ["json"]:
            found.append((start, "\n".join(body)))
    if not found:
        raise CorruptFile(path, None, "no ```json block")
    if len(found) > 1:
        raise CorruptFile(
            path, found[1][0], f"a second ```json block (one opens at line {found[0][0]})"
        )
    return found[0]


def _closes(line: str, fence: str) -> bool:
    closing = _CLOSE.match(line)
    return (
        closing is not None
        and closing.group(1)[0] == fence[0]
        and len(closing.group(1)) >= len(fence)
    )


def _check_outcome(path: str, report: Report) -> None:
    """A published report's name must agree with what it says."""
    name = os.path.basename(path)
    for suffix, ok in ((COMPLETE, True), (FAILED, False), (STAGED, None)):
        if name.endswith(suffix):
            if name[: -len(suffix)] != report.taskId:
                raise CorruptFile(path, None, f"it reports on task {report.taskId}")
            if ok is not None and report.ok is not ok:
                raise CorruptFile(path, None, f'"ok" is {str(report.ok).lower()}')
            return


def reported_tasks(reports_dir: str) -> set[str]:
    """The tasks with any report file in `reports_dir`, staged or published."""
    return {
        name[: -len(suffix)]
        for name in os.listdir(reports_dir)
        for suffix in (STAGED, COMPLETE, FAILED)
        if name.endswith(suffix)
    }


def find_report(reports_dir: str, task_id: str) -> str | None:
    """The published report of `task_id`, or None while it has none."""
    _check_name(task_id)
    complete = os.path.join(reports_dir, task_id + COMPLETE)
    failed = os.path.join(reports_dir, task_id + FAILED)
    if os.path.exists(complete) and os.path.exists(failed):
        raise CorruptFile(failed, None, f"task {task_id} also has {os.path.basename(complete)}")
    for path in (complete, failed):
        if os.path.exists(path):
            return path
    return None


def _check_name(task_id: str) -> None:
    # The id becomes a file name: nothing that could leave the reports directory.
    if not task_id or task_id in (".", "..") or any(c in task_id for c in "/\0\n"):
        raise SwarmforgeError(f"'{task_id}' cannot name a report file.")
