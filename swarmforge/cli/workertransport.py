"""Where a planned-run worker works: the NATS server, hub and project it is given, else
those of the `[transport]` of the project around it, and its credentials."""

from __future__ import annotations

import argparse
import os

from swarmforge.errors import SwarmforgeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from swarmforge.config.transportsettings import TransportSettings


def _settings(ns: argparse.Namespace) -> tuple[TransportSettings | None, str | None]:
    """The `[transport]` of the project around the current directory, and its root."""
    if ns.nats and ns.hub and ns.project:
        return None, None  # everything given: a worker needs no project
    from swarmforge.cli.common import project_root
    from swarmforge.config.settings import load_settings
    from swarmforge.projectroot import CHECKOUT, HERE

    try:
        root = os.path.realpath(project_root(None, (CHECKOUT, HERE)))
    except SwarmforgeError:
        return None, None
    return load_settings(root).transport, root


def transport_options(ns: argparse.Namespace) -> tuple[TransportSettings, str | None]:
    """The server, hub and project to work for, and the credentials file if any."""
    from pydantic import ValidationError

    from swarmforge.config.transportsettings import TransportSettings
    from swarmforge.net.subjects import project_id

    found, root = _settings(ns)
    url = ns.nats or (found.url if found else None)
    hub = ns.hub or (found.hub if found else None)
    if not url or not hub:
        missing = "--nats" if not url else "--hub"
        raise SwarmforgeError(
            f"swarmforge worker needs {missing}: give it, or run it inside a project whose "
            "swarmforge/swarmforge.toml has a [transport] table with url and hub."
        )
    project = ns.project or (found.project if found else None)
    try:
        settings = TransportSettings(url=url, hub=hub, project=project)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise SwarmforgeError(f"--{_flag(error['loc'])}: {error['msg']}") from None
    settings = settings.model_copy(update={"project": project_id(settings)})
    credentials = ns.credentials
    if credentials is None and found is not None and root is not None:
        credentials = found.credentials_path(root)
    return settings, credentials


def _flag(loc: tuple[int | str, ...]) -> str:
    name = str(loc[0]) if loc else "nats"
    return {"url": "nats"}.get(name, name)
