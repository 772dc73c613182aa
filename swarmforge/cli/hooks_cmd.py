"""The hidden commands other programs run: `agent-state` from an agent's hooks, and the
ready-made `[notify]` commands `notify-send` and `bell`."""

from __future__ import annotations

import argparse
import os
import sys

from swarmforge.cli.common import VIEWED, project_json_options, project_root
from swarmforge.errors import EXIT_OK, SwarmforgeError


def add_internal(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `agent-state`, `notify-send` and `bell`."""
    # Run by an agent's hooks or notify program (agents/hints.py): never by people.
    state = sub.add_parser("agent-state")
    state.add_argument("--agent", choices=("claude", "codex"), required=True)
    state.add_argument("document", nargs="?", help="codex's JSON argument (claude: stdin)")
    state.set_defaults(handler=_agent_state)
    # Ready-made [notify] commands: the notification's JSON comes on stdin.
    desktop = sub.add_parser("notify-send")
    desktop.set_defaults(handler=_notify_send)
    ring = sub.add_parser("bell")
    project_json_options(ring, json_flag=False)
    ring.set_defaults(handler=_bell)


def _notify_send(ns: argparse.Namespace) -> int:
    from swarmforge.daemon.alerts import readymade

    readymade.notify_send(sys.stdin.read())
    return EXIT_OK


def _bell(ns: argparse.Namespace) -> int:
    from swarmforge.daemon.alerts import readymade

    sys.stdin.read()  # the notification itself: the bell says only that there is one
    readymade.bell(project_root(ns.project, VIEWED))
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
