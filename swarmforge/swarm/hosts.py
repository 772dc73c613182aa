"""Which roles this host runs, when swarmforge.toml places roles on several hosts.

`[roles.<name>] host = "box-b"` places a role on the host started with
`swarmforge up --host box-b`; a role placed nowhere runs on the host started
without --host. Every host's `up` starts exactly its own roles and names the others
(roles.tsv and remote.tsv), so that mail to them crosses hosts through the transport.
"""

from __future__ import annotations

from swarmforge.config.roster import SwarmConfig
from swarmforge.config.settings import SETTINGS_FILE, Settings
from swarmforge.config.transportsettings import TransportSettings
from swarmforge.errors import SwarmforgeError


def split(
    config: SwarmConfig, settings: Settings, host: str | None
) -> tuple[SwarmConfig, dict[str, str]]:
    """The roles `host` runs (None: the host started without --host), and every other
    role with the name of the host that runs it ("" for the one without --host)."""
    placed = {role.name: settings.role(role.name).host for role in config.roles}
    elsewhere = sorted(name for name, where in placed.items() if where is not None)
    if settings.transport is None:
        if host is not None:
            raise SwarmforgeError(
                f"--host {host}: {SETTINGS_FILE} has no [transport]: one machine only.",
                hint="Add [transport] with the NATS server's url and the hub, or leave out --host.",
            )
        if elsewhere:
            raise SwarmforgeError(
                f"{SETTINGS_FILE} places {', '.join(elsewhere)} on other hosts, "
                "but has no [transport] to reach them.",
                hint="Add [transport] with the NATS server's url and hub, or remove their host.",
            )
    mine = tuple(role for role in config.roles if placed[role.name] == host)
    if not mine:
        where = f"host {host}" if host is not None else "the host started without --host"
        raise SwarmforgeError(
            f"No role of the swarm is placed on {where}.",
            hint=f'Set host = "..." under [roles.<name>] in {SETTINGS_FILE}, or start another.',
        )
    remote = {name: where or "" for name, where in placed.items() if where != host}
    return SwarmConfig(path=config.path, roles=mine), remote


def reach(root: str, transport: TransportSettings, host: str | None) -> frozenset[int]:
    """Check that the NATS server answers and holds the project's stream (made if missing);
    the ports that other live hosts' roles hold. One clear error otherwise."""
    try:
        from swarmforge.net import presence
        from swarmforge.net.failure import TransportError
        from swarmforge.net.transport import Transport
    except ImportError:
        raise SwarmforgeError(
            f"[transport] is set in {SETTINGS_FILE} but nats-py is missing.",
            hint="Install the nats extra: pip install 'swarmforge[nats]'.",
        ) from None
    client = Transport.from_settings(transport, root)
    try:
        client.connect()
        client.ensure_stream()
        return frozenset(presence.leased_ports(client, host))
    except TransportError as exc:
        raise SwarmforgeError(
            exc.message + ".",
            hint=f"Start the NATS server, or correct [transport] in {SETTINGS_FILE}.",
        ) from None
    finally:
        client.close()
