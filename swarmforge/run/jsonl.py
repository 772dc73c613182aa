"""Append-only JSON-lines files: reading them, and appending whole lines durably.

A line is committed by one write(2) of the whole line, newline included, then fsync.
So a crash can only leave the last line torn: it is skipped with a warning, and cut
off before the next append. A bad line anywhere else is corruption and is refused.
The journal and the park ledgers are such files.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import TypeAdapter, ValidationError

from swarmforge import fsutil
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.locks import ExclusiveFd
from swarmforge.records import describe

T = TypeVar("T")
Check = Callable[[T, int], "str | None"]


def parse_lines(
    path: str,
    data: bytes,
    adapter: TypeAdapter[T],
    check: Check[T] | None = None,
    fate: str = "skipped",
) -> tuple[list[T], list[str], int]:
    """The records of JSONL `data`, warnings about a torn last line, and where valid data ends.

    `check(record, line)` returns a problem with a well-formed record or None; such a
    problem is corruption even on the last line, because no crash produces it.
    """
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the data ends with a newline
    end = len(data) - len(tail)
    # Validation makes an object per line and never a cycle; pausing the cyclic
    # collector, which would rescan the growing heap, halves the time of a long read.
    collecting = gc.isenabled()
    gc.disable()
    try:
        records, torn = _records(path, lines, adapter, check, not tail)
    finally:
        if collecting:
            gc.enable()
    warnings = []
    if torn is not None:
        end -= len(lines[-1]) + 1
        warnings.append(f"{path}, line {len(lines)}: torn last line ({torn}), {fate}")
    if tail:
        warnings.append(f"{path}, line {len(lines) + 1}: torn last line (no newline), {fate}")
    return records, warnings, end


def _records(
    path: str, lines: list[bytes], adapter: TypeAdapter[T], check: Check[T] | None, tear: bool
) -> tuple[list[T], str | None]:
    """Validate complete lines; if `tear`, a bad last line is torn (its problem returned)."""
    records: list[T] = []
    for number, line in enumerate(lines, 1):
        try:
            record = adapter.validate_json(line)
        except ValidationError as exc:
            # A crash that cuts a multi-page write can leave garbage ending in a newline.
            if tear and number == len(lines):
                return records, describe(exc)
            raise CorruptFile(path, number, describe(exc)) from None
        problem = check(record, number) if check is not None else None
        if problem:
            raise CorruptFile(path, number, problem)
        records.append(record)
    return records, None


def read_lines(
    path: str, adapter: TypeAdapter[T], check: Check[T] | None = None
) -> tuple[list[T], list[str]]:
    """The records of JSONL file `path` (none if it is missing) and warnings; never writes."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return [], []
    records, warnings, _ = parse_lines(path, data, adapter, check)
    return records, warnings


def load_for_append(
    path: str, adapter: TypeAdapter[T], check: Check[T] | None = None
) -> tuple[list[T], list[str], int]:
    """Read (creating) JSONL file `path` and cut a torn last line off; records, warnings, size."""
    created = not Path(path).exists()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        # Appenders hold this lock while they write, so a torn tail seen under it is a
        # crash's leftover, never a line another process is still writing.
        with ExclusiveFd(fd), open(fd, "rb", closefd=False) as f:
            data = f.read()
            records, warnings, end = parse_lines(path, data, adapter, check, "cut off")
            if end < len(data):
                os.ftruncate(fd, end)
                os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsutil.fsync_dir(str(Path(path).parent))
    return records, warnings, end


def append_line(path: str, line: bytes, size: int) -> None:
    """Append one newline-terminated `line` to `path`, expected to hold `size` bytes; durable."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    try:
        append_to(fd, path, line, size)
    except OSError as exc:
        raise SwarmforgeError(f"{path}: cannot append: {exc.strerror}") from exc
    finally:
        os.close(fd)


def append_to(
    fd: int, path: str, data: bytes, size: int, *, durable: bool = True, sole: bool = False
) -> None:
    """Append `data` (whole lines) through `fd`, open with O_APPEND on `path`; durable unless
    told otherwise (then the caller fsyncs `fd` later). `sole`: the caller is the only
    process that reads or writes the file through the lock (the lock is skipped)."""
    if sole:
        _append(fd, path, data, size, durable)
    else:
        with ExclusiveFd(fd):
            _append(fd, path, data, size, durable)


def _append(fd: int, path: str, data: bytes, size: int, durable: bool) -> None:
    if os.fstat(fd).st_size != size:
        raise SwarmforgeError(f"{path} changed under its writer; is another process writing it?")
    written = os.write(fd, data)
    if written != len(data):
        # A short write (a full disk) must not leave a fragment for the next line to join.
        os.ftruncate(fd, size)
        raise SwarmforgeError(f"{path}: only {written} of {len(data)} bytes could be written.")
    if durable:
        os.fsync(fd)
