"""Starting the cockpit: the socket it listens on, the URL it prints, the server it runs."""

from __future__ import annotations

import socket

from swarmforge.errors import SwarmforgeError
from swarmforge.views.cockpit.app import app


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); one clear error if not."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise SwarmforgeError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}.",
            hint="--port 0 takes any free port; --host names an address of this machine.",
        ) from None
    except OverflowError:
        raise SwarmforgeError(f"--port {port}: a port is a number from 0 to 65535.") from None


def url(host: str, port: int, token: str | None) -> str:
    """Where the cockpit is, with its token when it needs one."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(root: str, sock: socket.socket, *, token: str | None, hosts: list[str] | None) -> None:
    """Serve the cockpit on `sock` until interrupted."""
    import uvicorn

    config = uvicorn.Config(
        app(root, token=token, hosts=hosts),
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    uvicorn.Server(config).run(sockets=[sock])
