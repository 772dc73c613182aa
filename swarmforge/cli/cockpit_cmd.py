"""`swarmforge cockpit`: the live view of the swarm in a browser (read-only).

It prints the URL (with the token when one is needed) and serves until interrupted;
the swarm keeps running when it stops.
"""

from __future__ import annotations

import argparse

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_OK


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `cockpit`."""
    from swarmforge.cli.common import project_option

    p = sub.add_parser(
        "cockpit",
        help="the live view of the swarm and the planned runs in a browser (read-only)",
        description="Serve a live, read-only view in a browser: one row per role (agent state "
        "and since when, queue, item in hand, port, branch, commits ahead of the base branch, "
        "dirty files, tokens), the latest events, a role's output, diff and handoff in hand, "
        "and the planned runs (every task's state and dependencies, parked tasks and why). "
        "The page updates itself as things happen. Ctrl-C stops the server, not the swarm.",
        epilog="On loopback (the default) no token is needed. With --host beyond loopback, "
        "every request must carry the token printed at start-up (in the URL it prints).",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1, this machine only)",
    )
    p.add_argument(
        "--port", type=int, default=0, help="the port to listen on (default: any free port)"
    )
    p.add_argument(
        "--json", action="store_true", help="print the URL and token as one JSON line at start-up"
    )
    project_option(p)
    p.set_defaults(handler=_cockpit)


def _cockpit(ns: argparse.Namespace) -> int:
    import os
    import secrets

    from swarmforge.cli.common import VIEWED, project_root
    from swarmforge.projectroot import CHECKOUT, HERE
    from swarmforge.views.cockpit import server
    from swarmforge.views.cockpit.access import is_loopback

    # With no swarm configured, the planned runs are still worth a view.
    found = project_root(ns.project, (*VIEWED, CHECKOUT, HERE), must_exist=False)
    root = os.path.realpath(found)
    sock = server.listen(ns.host, ns.port)
    port = sock.getsockname()[1]
    local = is_loopback(ns.host)
    token = None if local else secrets.token_urlsafe(24)
    # On loopback a request must name a loopback host (see the cockpit's docstring).
    hosts = ["127.0.0.1", "localhost", ns.host] if local else None
    address = server.url(ns.host, port, token)
    said = [f"swarmforge cockpit for {root}: {address}"]
    if token:
        said.append("Beyond loopback: every request must carry that token (it is in the URL).")
    said.append("Ctrl-C stops the cockpit; the swarm keeps running.")
    # One line, flushed: what a script reads before the server starts.
    shown = {"url": address, "host": ns.host, "port": port, "token": token}
    emit(ns.json, shown, said, line=True, flush=True)
    server.serve(root, sock, token=token, hosts=hosts)
    return EXIT_OK
