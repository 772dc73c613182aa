"""The log files of swarmforge's own long-running processes: daemon, runner, exec roles.

One way to open them: only a regular file, readable by its owner only whatever the
umask (a log names servers, hubs and what they answered), UTC timestamps. A log that
cannot be written (a full disk) is reported once on stderr with its path, never as the
logging module's traceback, and never stops the process whose work it records.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
import time
from typing import TextIO

from swarmforge import fsutil
from swarmforge.errors import SwarmforgeError

FORMAT = "%(asctime)s %(levelname)s %(message)s"
DATE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
LOG_MODE = 0o600  # owner only


class _Handler(logging.StreamHandler[TextIO]):
    def __init__(self, path: str) -> None:
        super().__init__(os.fdopen(open_log(path), "a", encoding="utf-8"))
        self.path = path
        self.failing = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.stream.write(self.format(record) + self.terminator)
            self.flush()
        except Exception:
            self.handleError(record)
        else:
            self.failing = False

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        if self.failing:
            return  # said once until a line gets through again
        self.failing = True
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        try:
            sys.stderr.write(f"swarmforge: {self.path}: cannot write the log: {reason}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # no stderr left to say it on


def open_log(path: str) -> int:
    """A descriptor appending to log file `path`, made (or narrowed to) LOG_MODE;
    SwarmforgeError if it is no regular file."""
    try:
        fd = fsutil.open_append(path, LOG_MODE)
    except fsutil.NotRegularFile as exc:
        raise SwarmforgeError(
            f"{path} is {exc.kind}, not a regular file.", hint="Remove it; it is made again."
        ) from None
    try:
        current = stat.S_IMODE(os.fstat(fd).st_mode)
        if current & ~LOG_MODE:  # left open to others by an older version
            os.fchmod(fd, current & LOG_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd


def logger(name: str, path: str) -> logging.Logger:
    """The logger `name`, writing to `path` (opened the first time it is asked for)."""
    log = logging.getLogger(name)
    log.setLevel(logging.INFO)
    log.propagate = False
    if not log.handlers:
        handler = _Handler(path)
        formatter = logging.Formatter(FORMAT, DATE_FORMAT)
        formatter.converter = time.gmtime
        handler.setFormatter(formatter)
        log.addHandler(handler)
    return log
