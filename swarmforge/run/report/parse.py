"""Reading a published report back: its one JSON block, validated, and agreeing with
its file name."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from swarmforge.errors import CorruptFile
from swarmforge.records import describe
from swarmforge.run.fields import Stamp
from swarmforge.run.report.files import COMPLETE, FAILED, STAGED

# CommonMark fences: up to three spaces, three or more backticks or tildes, an info string.
_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)\Z")
_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\Z")


class Report(BaseModel):
    """What a worker reported; fields beyond these are kept as they were written."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    taskId: str
    ok: bool
    exitCode: int | None = None
    finishedAt: Stamp


def read_report(path: str) -> Report:
    """The validated report at `path`; CorruptFile naming the file and line if it is not one."""
    raw = Path(path).read_bytes()
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
    name = Path(path).name
    for suffix, ok in ((COMPLETE, True), (FAILED, False), (STAGED, None)):
        if name.endswith(suffix):
            if name[: -len(suffix)] != report.taskId:
                raise CorruptFile(path, None, f"it reports on task {report.taskId}")
            if ok is not None and report.ok is not ok:
                raise CorruptFile(path, None, f'"ok" is {str(report.ok).lower()}')
            return
