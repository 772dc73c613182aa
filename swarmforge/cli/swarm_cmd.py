"""`swarmforge up|down|gc|port` (and `status`, printed by status_cmd.py), and the hidden
entry points of a run's processes."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from swarmforge.cli.common import VIEWED, emit, project_root
from swarmforge.errors import EXIT_FAILURE, EXIT_OK, SwarmforgeError
from swarmforge.roletable import ANYWHERE, CONFIG, HERE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from swarmforge.config.sessionrecord import SessionRecord
    from swarmforge.swarm.artifacts.report import Sweep
    from swarmforge.swarm.cleanup import GcReport


def _project_arg(p: argparse.ArgumentParser, json_flag: bool = True) -> None:
    from swarmforge.cli.common import project_option

    project_option(p)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print the result as JSON")


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the swarm subcommands."""
    up = sub.add_parser(
        "up",
        help="start (or resume) every role of swarmforge/swarmforge.conf",
        description="Create each role's worktree, write roles.tsv, start the "
        "delivery daemon and the agents. Idempotent.",
    )
    _project_arg(up)
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
    _project_arg(down)
    down.add_argument(
        "--purge",
        action="store_true",
        help="also remove the run's worktrees (uncommitted work is saved to "
        "refs/swarmforge/rescue/<run>/<worktree> first; mailboxes are kept)",
    )
    down.set_defaults(handler=_down)
    status = sub.add_parser(
        "status",
        help="per role: worktree, branch, port, agent, queue, "
        "current item, dirty files, failures, rescues",
    )
    _project_arg(status)
    from swarmforge.cli import status_cmd

    status.set_defaults(handler=status_cmd.show)
    gc = sub.add_parser("gc", help="clean up after a runner that was killed")
    _project_arg(gc)
    gc.add_argument(
        "--artifacts",
        action="store_true",
        help="also remove git-ignored build output from stopped roles' worktrees",
    )
    gc.add_argument(
        "--dry-run",
        action="store_true",
        help="with --artifacts: list that output and change nothing",
    )
    gc.set_defaults(handler=_gc)
    port = sub.add_parser(
        "port",
        help="print the deterministic port of a branch",
        description="Print the home port of BRANCH in the project: SHA-256 of the real "
        "path of its main checkout, a NUL byte and BRANCH, into [4000, 5000).",
    )
    port.add_argument("branch")
    _project_arg(port, json_flag=False)
    port.set_defaults(handler=_port)


def add_internal(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the entry points of a run's own processes, started by `up`, not by people."""
    for name, handler in (("role-loop", _role_loop), ("supervise", _supervise), ("pane", _pane)):
        hidden = sub.add_parser(name)
        _project_arg(hidden, json_flag=False)
        if name != "supervise":
            hidden.add_argument("role")
        hidden.set_defaults(handler=handler)
    # Run by an agent's hooks or notify program (agents/hints.py): never by people.
    state = sub.add_parser("agent-state")
    state.add_argument("--agent", choices=("claude", "codex"), required=True)
    state.add_argument("document", nargs="?", help="codex's JSON argument (claude: stdin)")
    state.set_defaults(handler=_agent_state)
    # Ready-made [notify] commands: the notification's JSON comes on stdin.
    desktop = sub.add_parser("notify-send")
    desktop.set_defaults(handler=_notify_send)
    ring = sub.add_parser("bell")
    _project_arg(ring, json_flag=False)
    ring.set_defaults(handler=_bell)


def _notify_send(ns: argparse.Namespace) -> int:
    from swarmforge.daemon import alerts

    alerts.notify_send(sys.stdin.read())
    return EXIT_OK


def _bell(ns: argparse.Namespace) -> int:
    from swarmforge.daemon import alerts

    sys.stdin.read()  # the notification itself: the bell says only that there is one
    alerts.bell(project_root(ns.project, VIEWED))
    return EXIT_OK


def _agent_state(ns: argparse.Namespace) -> int:
    """Record an agent's hint; always exit 0, since a failing hook would disturb the agent."""
    from swarmforge.agents import hints
    from swarmforge.agents.registry import agent

    try:
        document = ns.document if ns.document is not None else sys.stdin.read()
        hints.record(dict(os.environ), agent(ns.agent), document)
    except (OSError, ValueError, SwarmforgeError):
        pass  # a hint is only evidence: losing one never stops the agent
    return EXIT_OK


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


def _gc(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.cleanup import gc

    if ns.dry_run and not ns.artifacts:
        raise SwarmforgeError(
            "gc: --dry-run goes with --artifacts.",
            hint="Run `swarmforge gc --artifacts --dry-run`.",
        )
    report = gc(project_root(ns.project, VIEWED), artifacts=ns.artifacts, dry_run=ns.dry_run)
    emit(ns.json, report.as_json(), _gc_lines(report, ns.dry_run))
    return EXIT_OK


def _gc_lines(report: GcReport, dry_run: bool) -> Iterator[str]:
    """What gc ended, pruned and removed (nothing of it on a dry run), then the swept output."""
    done = [
        f"{verb} {len(items)} {what}"
        for verb, items, what in (
            ("ended", report.processes, "process(es)"),
            ("pruned", report.worktrees, "stale worktree registration(s)"),
            ("rolled back", report.rolled_back, "interrupted worktree creation(s)"),
            ("removed", report.cleared, "half-made worktree directory(ies)"),
        )
        if items
    ]
    if report.temporary_files:
        done.append(f"removed {report.temporary_files} temporary file(s) of killed helpers")
    alive = "the run is alive, its processes were left alone; " if report.live else ""
    if not dry_run:
        yield alive + ("; ".join(done) or "nothing to clean up")
    if report.artifacts is not None:
        yield from _sweep_lines(report.artifacts)


def _sweep_lines(found: Sweep) -> list[str]:
    """What `gc --artifacts` says: each path removed (or to be), what was left and why."""
    from swarmforge.swarm.disk import readable

    verb = "would remove" if found.dry_run else "removed"
    lines = [f"  {verb} {a.path} ({readable(a.bytes)})" for a in found.removed]
    lines += [f"  left {s.path} ({s.role}): {s.reason}" for s in found.skipped]
    lines += [f"  could not remove {s.path} ({s.role}): {s.reason}" for s in found.failed]
    total = f"{verb} {len(found.removed)} ignored path(s), {readable(found.bytes)}"
    return [f"build output of stopped roles: {total}", *lines]


def _port(ns: argparse.Namespace) -> int:
    from swarmforge.ports import port_for, project_identity

    if not ns.branch.strip():
        raise SwarmforgeError("port: the branch name is empty.")
    project = project_identity(_port_project(ns.project))
    home = port_for(ns.branch, project)
    print(home)
    given = _recorded_port(project, ns.branch)
    if given is not None and given != home:
        print(f"note: the project's run gave {ns.branch} port {given} instead", file=sys.stderr)
    return EXIT_OK


def _port_project(option: str | None) -> str:
    """`--project DIR`, else the project seen from here, as `doctor` finds it."""
    return project_root(option, (*ANYWHERE, HERE))


def _recorded_port(root: str, branch: str) -> int | None:
    """The port the project's session record gives `branch`, if a role of the run works there."""
    from swarmforge.config import sessionrecord
    from swarmforge.errors import CorruptFile

    try:
        record = sessionrecord.load(root)
    except (CorruptFile, OSError):
        return None
    found = [r.port for r in record.roles if r.branch == branch] if record else []
    return found[0] if found else None


def _supervise(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.headless.runner import serve

    serve(project_root(ns.project))
    return EXIT_OK


def _pane(ns: argparse.Namespace) -> int:
    from swarmforge.swarm import pane

    return pane.serve(project_root(ns.project), ns.role)


def _role_loop(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.execrole.serve import serve_role

    serve_role(project_root(ns.project), ns.role)
    return EXIT_OK
