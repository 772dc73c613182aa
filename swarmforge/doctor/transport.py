"""The NATS server of `[transport]`: it answers, has JetStream, and holds the project's
stream as every host expects it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from swarmforge.config import settings
from swarmforge.doctor.check import Check
from swarmforge.errors import CorruptFile

if TYPE_CHECKING:
    from swarmforge.net.transport import Transport


def check_transport(root: str, env: Mapping[str, str] | None = None) -> Check | None:
    """With `[transport]` set: the NATS server answers, has JetStream, and holds the
    project's stream as every host expects it. None without `[transport]`."""
    try:
        transport = settings.load_settings(root).transport
    except CorruptFile as exc:
        return Check("transport", "FAIL", exc.message, f"fix {settings.SETTINGS_FILE}")
    if transport is None:
        return None
    try:
        from swarmforge.net.failure import TransportError
        from swarmforge.net.transport import Transport
    except ImportError:
        fix = "install the nats extra: pip install 'swarmforge[nats]'"
        return Check("transport", "FAIL", "[transport] is set but nats-py is missing", fix)
    client = Transport.from_settings(transport, root, env)
    try:
        client.connect()
        return _transport_state(client)
    except TransportError as exc:
        fix = f"start the NATS server at {client.address}, or correct [transport] and its login"
        return Check("transport", "FAIL", exc.message, fix)
    finally:
        client.close()


def _transport_state(client: Transport) -> Check:
    """What the connected server holds for the project."""
    from swarmforge.net.mailstream import config_problems
    from swarmforge.net.subjects import stream_name

    name = stream_name(client.project)
    if not client.jetstream_enabled():
        fix = "start nats-server with JetStream (-js, or jetstream {} in its configuration)"
        return Check("transport", "FAIL", f"{client.address} answers but has no JetStream", fix)
    info = client.stream_info()
    if info is None:
        detail = f"{client.address} with JetStream; the stream {name} does not exist yet"
        return Check("transport", "warn", detail, "it is made when mail first crosses hosts")
    problems = config_problems(info.config, client.project)
    if problems:
        fix = f"remove the stream {name} (nats stream rm {name}) so that it is made again"
        return Check("transport", "FAIL", f"stream {name}: {'; '.join(problems)}", fix)
    return Check("transport", "ok", f"{client.address} with JetStream, stream {name} as expected")
