"""`swarmforge trust`: let the agents a project uses start in it unattended, showing the change."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import TYPE_CHECKING, TextIO

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_FAILURE, EXIT_OK, Refused, SwarmforgeError

if TYPE_CHECKING:
    from swarmforge.agents.trust import Change


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `trust`."""
    from swarmforge.cli.common import project_option

    trust = sub.add_parser(
        "trust",
        help="make the project trusted by the agents it uses (shows the change first)",
        description="For claude and codex (those the project's swarmforge.conf uses, or the "
        "one named), record the project as trusted in the agent's own configuration file "
        "(claude: also approve ANTHROPIC_API_KEY when it is set), so that it starts without "
        "asking. Shows the change and asks first; only the entries that must change are "
        "written, the rest of each file is kept as it is.",
    )
    trust.add_argument("--agent", choices=("claude", "codex"), help="only this agent")
    trust.add_argument("--yes", action="store_true", help="apply without asking")
    trust.add_argument("--json", action="store_true", help="print the changes as JSON")
    project_option(trust)
    trust.set_defaults(handler=_trust)


def _agents(root: str, named: str | None) -> tuple[str, ...]:
    from swarmforge.agents.trust import agents_used
    from swarmforge.doctor.projectfiles import check_config

    if named:
        return (named,)
    found, config = check_config(root)
    if config is None:
        raise SwarmforgeError(
            f"{found.detail}: cannot tell which agents {root} uses.",
            hint="Name the agent: swarmforge trust --agent claude (or codex).",
        )
    return agents_used(config)


def _show(changes: list[Change], out: TextIO) -> None:
    for change in changes:
        print(f"{change.agent}: {'create' if change.created else 'change'} {change.path}", file=out)
        print(change.diff, end="", file=out)


def _confirm(ns: argparse.Namespace, changes: list[Change], report: dict[str, object]) -> bool:
    if ns.yes:
        return True
    if not sys.stdin.isatty():
        emit(ns.json, {**report, "applied": False})  # as text, the refusal says it all
        raise Refused(
            "Not applied: confirmation needs a terminal, and --yes was not given; "
            "nothing was written.",
            hint="Run it in a terminal, or add --yes to apply the changes shown.",
        )
    # With --json, stdout carries only the JSON document.
    out = sys.stderr if ns.json else sys.stdout
    if ns.json:
        _show(changes, out)
    print("Apply these changes? [y/N] ", end="", file=out, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _trust(ns: argparse.Namespace) -> int:
    from swarmforge.agents import trust as agentconf
    from swarmforge.agents.homes import trust_key
    from swarmforge.cli.common import project_root
    from swarmforge.projectroot import ANYWHERE, HERE

    # Like doctor, trust runs before `up`: a project with a config but no swarm yet.
    root = project_root(ns.project, (*ANYWHERE, HERE))
    agents = _agents(root, ns.agent)
    planned = [agentconf.plan_trust(a, root, os.environ) for a in agents]
    changes = [c for c in planned if c is not None]
    rows = [
        {"agent": c.agent, "path": c.path, "created": c.created, "diff": c.diff} for c in changes
    ]
    report: dict[str, object] = {
        "project": trust_key(root),
        "agents": list(agents),
        "changes": rows,
    }
    if not changes:
        who = ", ".join(agents) or "no agent (the configuration uses neither claude nor codex)"
        return _finish(
            ns, root, agents, {**report, "applied": False}, f"nothing to change for {who}"
        )
    if not ns.json:
        _show(changes, sys.stdout)
    if not _confirm(ns, changes, report):
        emit(ns.json, {**report, "applied": False}, "nothing written.")
        return EXIT_FAILURE
    for change in changes:
        agentconf.apply(change)
    written = f"written: {', '.join(c.path for c in changes)}"
    return _finish(ns, root, agents, {**report, "applied": True}, written)


def _finish(
    ns: argparse.Namespace, root: str, agents: tuple[str, ...], report: dict[str, object], text: str
) -> int:
    """Print the outcome and what still stops an agent (what trust cannot do for the user)."""
    from swarmforge.agents.trust import blockers

    left = [b for agent in agents for b in blockers(agent, root, os.environ)]
    report["remaining"] = [dataclasses.asdict(b) for b in left]
    lines = [text, *(f"still needed for {b.agent}: {b.problem}: run `{b.fix}`" for b in left)]
    emit(ns.json, report, lines)
    return EXIT_OK
