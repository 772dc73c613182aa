"""`swarmforge port BRANCH`: the deterministic port of a branch, and the one the session
gave it instead, if any."""

from __future__ import annotations

import argparse
import sys

from swarmforge.cli.common import project_json_options, project_root
from swarmforge.errors import EXIT_OK, SwarmforgeError
from swarmforge.projectroot import ANYWHERE, HERE


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `port`."""
    port = sub.add_parser(
        "port",
        help="print the deterministic port of a branch",
        description="Print the home port of BRANCH in the project: SHA-256 of the real "
        "path of its main checkout, a NUL byte and BRANCH, into [4000, 5000).",
    )
    port.add_argument("branch")
    project_json_options(port, json_flag=False)
    port.set_defaults(handler=_port)


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
