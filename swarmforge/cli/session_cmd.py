"""`swarmforge up|down`: start (or resume) every role of the swarm, and stop all of it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from swarmforge.cli.common import VIEWED, emit, project_json_options, project_root
from swarmforge.errors import EXIT_FAILURE, EXIT_OK
from swarmforge.projectroot import CONFIG

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from swarmforge.config.sessionrecord import SessionRecord


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `up` and `down`."""
    up = sub.add_parser(
        "up",
        help="start (or resume) every role of swarmforge/swarmforge.conf",
        description="Create each role's worktree, write roles.tsv, start the "
        "delivery daemon and the agents. Idempotent.",
    )
    project_json_options(up)
    up.add_argument(
        "--backend",
        choices=("tmux", "headless"),
        help="tmux sessions on a private socket (default, or the run's backend "
        "when resuming), or supervised headless processes",
    )
    up.add_argument(
        "--stagger",
        type=float,
        metavar="SECONDS",
        help="pause between starting two tmux sessions (default 1)",
    )
    up.add_argument(
        "--inhibit-sleep", action="store_true", help="keep the machine awake while the swarm runs"
    )
    up.add_argument(
        "--host",
        metavar="NAME",
        help="start the roles swarmforge.toml places on host NAME (roles on several "
        "hosts; default: the roles placed on no host)",
    )
    up.set_defaults(handler=_up)
    down = sub.add_parser(
        "down",
        help="stop everything the run started",
        description="Stop the agents' process trees, the tmux sessions, the runner and the daemon.",
    )
    project_json_options(down)
    down.add_argument(
        "--purge",
        action="store_true",
        help="also remove the run's worktrees (uncommitted work is saved to "
        "refs/swarmforge/rescue/<run>/<worktree> first; mailboxes are kept)",
    )
    down.set_defaults(handler=_down)


def _say(ns: argparse.Namespace) -> Callable[[str], None]:
    """Progress lines on stderr, unless the result goes out as JSON."""

    def say(message: str) -> None:
        if not ns.json:
            print(message, file=sys.stderr, flush=True)

    return say


def _up(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.session.up import up

    record, already = up(
        project_root(ns.project, (CONFIG,)),  # before roles.tsv exists: where the config is
        ns.backend,
        stagger=ns.stagger,
        inhibit_sleep=ns.inhibit_sleep,
        host=ns.host,
        progress=_say(ns),
    )
    if already and ns.backend and ns.backend != record.backend:
        # Said even with --json: stderr is free, and the flag had no effect.
        print(
            f"ignored --backend {ns.backend}: the swarm is already running with the "
            f"{record.backend} backend; `swarmforge down` first to switch",
            file=sys.stderr,
        )
    emit(ns.json, {"already_running": already, **record.model_dump()}, _up_lines(record, already))
    return _say_setup_failed(record)


def _up_lines(record: SessionRecord, already: bool) -> Iterator[str]:
    """The session, each role here with its port, branch and worktree, the roles elsewhere."""
    yield f"swarm {record.run_id} {'already running' if already else 'running'} ({record.backend})"
    for role in record.roles:
        yield f"  {role.name:14s} port {role.port}  {role.branch:32s} {role.path}"
    for name, where in record.remote.items():
        yield f"  {name:14s} on {where or 'the host started without --host'}"


def _say_setup_failed(record: SessionRecord) -> int:
    """One line on stderr per role whose worktree setup failed, so its agent is not started;
    EXIT_FAILURE if there is any. Said even with --json: stderr is free."""
    from swarmforge.swarm.bootstrap import marks

    found = marks.failures(record.project, [role.name for role in record.roles])
    for failed in found:
        print(
            f"role {failed.role} not started: {failed.reason} (output in {failed.log}); "
            "fix it, then `swarmforge up` runs its setup again",
            file=sys.stderr,
        )
    return EXIT_FAILURE if found else EXIT_OK


def _down(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.session.down import down

    report = down(project_root(ns.project, VIEWED), purge=ns.purge, progress=_say(ns))
    if report.run_id is None:
        said = "no swarm was running in this project"
    else:
        purged = f"; removed {len(report.removed)} worktree(s)" if ns.purge else ""
        said = f"swarm {report.run_id} stopped{purged}"
    emit(ns.json, report.as_json(), said)
    return EXIT_OK
