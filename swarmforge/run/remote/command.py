"""A task's command on a worker: in a session of its own, its output in files of which only
the tails are read, and killed with whatever it started on a second stop request."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from typing import IO

from swarmforge.proc import popen
from swarmforge.run.report.markdown import TAIL

SLICE = 0.2  # seconds between two looks at a stop request while a command runs


class Stopped(Exception):
    """A second stop request came while a task ran: it goes back to the queue."""


class Commands:
    """Runs the commands of a worker's tasks, one at a time."""

    def __init__(
        self, stopping: Callable[[], bool], quietly: Callable[[Callable[[], None]], None]
    ) -> None:
        self._stopping = stopping  # a second stop request came: kill the command
        self._quietly = quietly  # calls a step, saying rather than raising a transport error
        # Where the commands write their output, made once: a file made per task cost
        # about a millisecond each on a busy disk.
        self._output = (tempfile.TemporaryFile(), tempfile.TemporaryFile())  # noqa: SIM115 - closed by close()

    def close(self) -> None:
        """Release the output files."""
        for file in self._output:
            file.close()

    def run(
        self,
        argv: list[str],
        cwd: str,
        extra: dict[str, str],
        progress: Callable[[], None],
        every: float,
    ) -> tuple[int | None, bytes, bytes, str | None]:
        """Run `argv` to its end: exit code, tails of stdout and stderr, why it did not start.

        In a session of its own, so that Ctrl-C at the worker's terminal reaches the
        worker alone, which then lets the command finish; output goes to files, of
        which only the tails are read.
        """
        out, err = self._output
        for file in (out, err):  # the last task's output, dropped: the files serve each task
            file.seek(0)
            file.truncate()
        try:
            child = popen.start(
                argv,
                cwd=cwd,
                extra=extra,
                stdin=popen.DEVNULL,
                stdout=out.fileno(),
                stderr=err.fileno(),
                session=True,
            )
        except OSError as exc:
            return None, b"", b"", f"cannot run {argv[0]}: {exc.strerror}"
        self._wait(child, progress, every)
        return child.returncode, _tail(out), _tail(err), None

    def _wait(self, child: popen.Started, progress: Callable[[], None], every: float) -> None:
        import subprocess

        told = time.monotonic()
        while True:
            try:
                child.wait(timeout=SLICE)
                return
            except subprocess.TimeoutExpired:
                pass
            if self._stopping():
                _kill_session(child)
                raise Stopped
            if time.monotonic() - told >= every:
                told = time.monotonic()
                self._quietly(progress)  # a lost one costs at worst a redelivery


def _tail(file: IO[bytes]) -> bytes:
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - TAIL))
    return file.read()


def _kill_session(child: popen.Started) -> None:
    """End the command and whatever it started (its own session), and reap it."""
    with suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
