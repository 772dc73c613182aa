"""What the subcommands share: the `--project` option, how a result is printed as text or
JSON (`emit`), and how a command unwinds on SIGTERM.

Also where each kind of command finds its project (`VIEWED`, `PLANNED`, `project_root`)
and the options the swarm and planned-run commands share.

The receive helpers print through `emit` too: at import this module loads nothing they
do not load already (no argparse, typing or signal), to keep their start-up short.
"""

from __future__ import annotations

import os

from swarmforge import projectroot, stateview
from swarmforge.errors import EXIT_SIGNALLED, SwarmforgeError
from swarmforge.projectroot import CHECKOUT, CONFIG, HERE, SWARM

# What a view or a status looks at: a swarm, or before any `up` (no roles.tsv yet) the
# configured project, so that it can say no swarm runs there.
VIEWED = (SWARM, CONFIG)
# A planned run needs no swarm: its project is the enclosing checkout, or the directory.
PLANNED = (CHECKOUT, HERE)

TYPE_CHECKING = False  # typing itself costs milliseconds on the helpers' hot path
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable


def project_option(p: argparse.ArgumentParser) -> None:
    """Add the `--project DIR` option every command that works on a project takes."""
    p.add_argument(
        "--project", metavar="DIR", help="the project (default: found from the current directory)"
    )


def project_json_options(p: argparse.ArgumentParser, json_flag: bool = True) -> None:
    """Add `--project DIR` and, unless `json_flag` is false, `--json`."""
    project_option(p)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print the result as JSON")


def planned_options(p: argparse.ArgumentParser) -> None:
    """Add the `--project DIR` and `--json` options of the planned-run commands."""
    p.add_argument(
        "--project",
        metavar="DIR",
        help="the project (default: the git checkout of the current directory)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(EXIT_SIGNALLED + signum)


def unwind_on_sigterm() -> None:
    """Make SIGTERM unwind this command as Ctrl-C does, so its clean-up runs."""
    import signal

    signal.signal(signal.SIGTERM, _terminated)


def emit(
    as_json: bool,
    data: object,
    text: str | Iterable[str] = (),
    *,
    line: bool = False,
    flush: bool = False,
) -> None:
    """Print a result: with `--json` `data` as JSON, else `text` (a string, or its lines)."""
    if as_json:
        import json

        # A record of a stream (`line`) is one compact line, as JSON Lines readers take it
        # and as events.jsonl stores events; a command's one result is an indented document.
        shown = json.dumps(data, separators=(",", ":")) if line else json.dumps(data, indent=2)
    else:
        lines = [text] if isinstance(text, str) else list(text)
        if not lines:
            return  # nothing to say: not even an empty line
        shown = "\n".join(lines)
    print(shown, flush=flush)


def project_root(
    option: str | None, finds: tuple[str, ...] = (SWARM,), *, must_exist: bool = True
) -> str:
    """The project: `--project DIR` as given, else the first of `finds` seen from the
    current directory (projectroot.locate: SWARM, CONFIG, CHECKOUT, HERE).

    `must_exist`: `--project` must name a directory (a planned run takes it as given).
    When nothing is found, the error says to run `init` if a config would have done.
    """
    if option:
        if must_exist and not os.path.isdir(option):
            raise SwarmforgeError(f"--project {option}: no such directory.")
        stateview.ensure(option)
        return os.path.abspath(option)
    here = os.getcwd()
    found = projectroot.locate(here, finds)
    if found is not None:
        stateview.ensure(found)  # its view of the state, looked at on every use
        return found
    if projectroot.CONFIG in finds:
        raise SwarmforgeError(
            f"No swarmforge/swarmforge.conf here or above {here}.",
            hint="Run `swarmforge init` first.",
        )
    raise SwarmforgeError(projectroot.NOT_FOUND)
