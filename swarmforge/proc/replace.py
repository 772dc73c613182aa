"""Running a program in place of this process, on the user's terminal (`swarmforge attach`)."""

from __future__ import annotations

import os

from swarmforge.errors import SwarmforgeError
from swarmforge.proc.policy import environment
from swarmforge.proc.spawn import which

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import NoReturn


def replace(argv: list[str], *, env: Mapping[str, str] | None = None) -> NoReturn:
    """Run `argv` in place of this process, on our terminal (`swarmforge attach`); never returns.

    The fourth shape: the program takes over the terminal and its exit is the
    command's, with nothing of ours left waiting. Same policy as the others: the
    environment less `LOCAL_GIT_VARS`, and the signals Python ignores get their
    default action back (an ignored signal stays ignored across exec).
    """
    import signal
    import sys

    exe = which(argv[0])
    if exe is None:
        raise SwarmforgeError(
            f"Cannot find '{argv[0]}' on PATH.", hint=f"Install {argv[0]} or add it to PATH."
        )
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(exe, argv, environment(env))
    except OSError as exc:
        raise SwarmforgeError(f"Cannot run '{argv[0]}': {exc.strerror}.") from None
