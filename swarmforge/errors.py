"""The one exception root of swarmforge and its small, fixed table of exit codes."""

from __future__ import annotations

# Exit codes shared by every command (and by SwarmForge's helper scripts).
EXIT_OK = 0
EXIT_FAILURE = 1  # cannot run: usage, environment, missing project, corrupt state
EXIT_REFUSED = 2  # refused: invalid draft, ambiguous or contradictory mailbox state
EXIT_NOT_RUNNING = 3  # a status query found the service stopped (as LSB init scripts say)
EXIT_SIGNALLED = 128  # + N: ended by signal N, as a shell reports it
EXIT_INTERRUPTED = EXIT_SIGNALLED + 2  # Ctrl-C (SIGINT)
EXIT_BROKEN_PIPE = EXIT_SIGNALLED + 13  # the reader of stdout left (SIGPIPE)


def shell_status(returncode: int) -> int:
    """A child's exit as a shell shows it: 128 + N for one ended by signal N."""
    return EXIT_SIGNALLED - returncode if returncode < 0 else returncode


class SwarmforgeError(Exception):
    """Root of every error swarmforge raises on purpose; `swarmforge.cli.main` reports it."""

    exit_code = EXIT_FAILURE

    def __init__(self, message: str, *, details: tuple[str, ...] = (), hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.hint = hint

    def lines(self) -> list[str]:
        """The error as the lines printed on stderr."""
        out = [self.message, *self.details]
        if self.hint:
            out.append(self.hint)
        return out


class Refused(SwarmforgeError):
    """A protocol refusal: the state or the input is not one the helpers act on."""

    exit_code = EXIT_REFUSED


class CorruptFile(SwarmforgeError):
    """A file that crosses a durability boundary failed validation when read."""

    def __init__(self, path: str, line: int | None, problem: str, *, refused: bool = False) -> None:
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem
        if refused:
            self.exit_code = EXIT_REFUSED


def os_error_line(exc: OSError) -> str:
    """An operating-system error as one line of output, naming the path it concerns."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return f"swarmforge: {reason}"
    where = str(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {exc.filename2}"
    return f"swarmforge: {where}: {reason}"
