"""`swarmforge init|doctor`: scaffold a project's swarm configuration, and check what it needs."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_FAILURE, EXIT_OK, SwarmforgeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from swarmforge.config.scaffold import Scaffolded
    from swarmforge.doctor.check import Check


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `init` and `doctor`."""
    from swarmforge.cli.common import project_option

    init = sub.add_parser(
        "init",
        help="scaffold swarmforge/ (conf, constitution, role prompts) from a shipped pack",
        description="Write DIR/swarmforge/swarmforge.conf, the constitution and its articles, "
        "and a prompt per agent role, from a pack. Existing files are left alone (and nothing "
        "is written) unless --force.",
    )
    init.add_argument(
        "--pack",
        default="two-pack",
        metavar="NAME",
        help="the pack to copy (default two-pack); 'list' prints them",
    )
    init.add_argument("--force", action="store_true", help="replace files that exist")
    init.add_argument("--json", action="store_true", help="print the result as JSON")
    init.add_argument(
        "dir",
        nargs="?",
        default=".",
        metavar="DIR",
        help="the project (default: here; created if missing)",
    )
    init.set_defaults(handler=_init)
    doctor = sub.add_parser(
        "doctor",
        help="check git, tmux, the agents on PATH and the project's state",
        description="One line per check: ok, warn or FAIL, with what to do. Exits 1 on a "
        "FAIL. In a project (a git checkout, a directory with swarmforge/swarmforge.conf, or "
        "--project DIR), a missing swarmforge.conf is a FAIL, since `up` cannot start there; "
        "outside any project only the tools are checked and it is a warning.",
    )
    project_option(doctor)
    doctor.add_argument(
        "--probe",
        action="store_true",
        help="also prove each claude and codex sandbox the roles use: the agent, offline "
        "against a scripted model in a scratch repository, commits in a worktree and must "
        "fail to write outside it (a few seconds per agent)",
    )
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.set_defaults(handler=_doctor)


def _list_packs(ns: argparse.Namespace) -> int:
    from swarmforge.config.scaffold import pack_config, packs

    names = packs()
    # The text needs each pack's configuration read: a generator reads none for --json.
    said = (f"{name:12s} {', '.join(pack_config(name).names)}" for name in names)
    emit(ns.json, {"packs": names}, said)
    return EXIT_OK


def _init(ns: argparse.Namespace) -> int:
    from swarmforge.config.scaffold import init

    if ns.pack == "list":
        return _list_packs(ns)
    result = init(ns.dir, ns.pack, force=ns.force)
    emit(ns.json, dataclasses.asdict(result), _next_steps(result))
    return EXIT_OK


def _next_steps(result: Scaffolded) -> Iterator[str]:
    """What `init` wrote, and the commands that come next."""
    yield f"scaffolded the {result.pack} in {result.dir}:"
    yield from (f"  {os.path.relpath(path, result.dir)}" for path in result.written)
    yield "next:"
    yield f"  cd {result.dir}"
    if result.commit_first:
        # Worktree roles get a checkout of HEAD: an uncommitted swarmforge/ is not in it.
        yield "  git add swarmforge && git commit -m 'Add the swarm configuration'"
    yield "  swarmforge doctor    # check git, tmux and the agents the roles need"
    yield "  swarmforge up        # start the swarm"


def _doctor_root(option: str | None) -> tuple[str, bool]:
    """The project to check, and whether it is one (False: doctor runs outside any)."""
    # Unlike other commands, doctor runs anywhere: before `init`, outside any project.
    from swarmforge.cli.common import project_root
    from swarmforge.projectroot import ANYWHERE

    try:
        return project_root(option, ANYWHERE), True
    except SwarmforgeError:
        if option:
            raise
        return str(Path.cwd()), False


def _probes(root: str, in_project: bool) -> list[Check]:
    """A sandbox probe of each agent whose roles run in its sandbox, said as it starts."""
    from swarmforge.doctor.agents import boxed_agents
    from swarmforge.rehearse.sandboxprobe import probe

    agents = boxed_agents(root) if in_project else []
    found = []
    for agent in agents:
        print(f"probing {agent}'s sandbox...", file=sys.stderr, flush=True)
        found.append(probe(agent))
    return found


def _doctor(ns: argparse.Namespace) -> int:
    from swarmforge.doctor.report import run_checks

    root, in_project = _doctor_root(ns.project)
    checks = run_checks(root, in_project=in_project)
    if ns.probe:
        checks += _probes(root, in_project)
    said = [f"project {root}" if in_project else f"no project found from {root}"]
    for check in checks:
        line = f"{check.status:4s}  {check.check:16s} {check.detail}"
        said.append(line + (f": {check.fix}" if check.fix else ""))
    emit(ns.json, [dataclasses.asdict(c) for c in checks], said)
    return EXIT_FAILURE if any(c.status == "FAIL" for c in checks) else EXIT_OK
