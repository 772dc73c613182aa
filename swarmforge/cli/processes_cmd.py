"""The hidden entry points of a session's processes: its headless supervisor, its tmux
panes and its exec roles, started by `up`, never by people."""

from __future__ import annotations

import argparse

from swarmforge.cli.common import project_json_options, project_root
from swarmforge.errors import EXIT_OK


def add_internal(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `role-loop`, `supervise` and `pane`."""
    for name, handler in (("role-loop", _role_loop), ("supervise", _supervise), ("pane", _pane)):
        hidden = sub.add_parser(name)
        project_json_options(hidden, json_flag=False)
        if name != "supervise":
            hidden.add_argument("role")
        hidden.set_defaults(handler=handler)


def _supervise(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.headless import runner

    runner.serve(project_root(ns.project))
    return EXIT_OK


def _pane(ns: argparse.Namespace) -> int:
    from swarmforge.swarm import pane

    return pane.serve(project_root(ns.project), ns.role)


def _role_loop(ns: argparse.Namespace) -> int:
    from swarmforge.swarm.execrole.serve import serve_role

    serve_role(project_root(ns.project), ns.role)
    return EXIT_OK
