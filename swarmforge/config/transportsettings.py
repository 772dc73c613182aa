"""`[transport]` of swarmforge.toml: how roles on several hosts reach each other."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from swarmforge.config.fields import inside_project
from swarmforge.text import shown_url

TRANSPORT_SCHEMES = ("nats", "tls")
PROJECT_NAME = re.compile(r"[A-Za-z0-9-]{1,32}")
NATS_USER_ENV = "SWARMFORGE_NATS_USER"
NATS_PASSWORD_ENV = "SWARMFORGE_NATS_PASSWORD"


class TransportSettings(BaseModel):
    """How roles on several hosts reach each other: a NATS server with JetStream.

    Without this table the swarm stays on one machine and handoffs move as files only.
    The credentials file, when given, lies inside the project; without one the user
    and password come from SWARMFORGE_NATS_USER and SWARMFORGE_NATS_PASSWORD, so that
    no secret has to be written into a file that may be committed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    credentials: str | None = None
    hub: str | None = None  # a git URL or path every host can reach
    # What names the project on the server; by default a hash of `hub` (see
    # swarmforge/net/subjects.py), which every host shares while its paths differ.
    project: str | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        _not_an_option(value, "write it like nats://127.0.0.1:4222")
        if not _is_server_url(value):
            raise ValueError(
                f"{json.dumps(shown_url(value))} is not a NATS server URL: write it like "
                "nats://127.0.0.1:4222 or tls://nats.example.com:4222"
            )
        return value

    @field_validator("credentials")
    @classmethod
    def _credentials(cls, value: str | None) -> str | None:
        return None if value is None else inside_project(value)

    @field_validator("hub")
    @classmethod
    def _hub(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.strip() or value != value.strip():
            raise ValueError(
                f"{json.dumps(shown_url(value))} is empty or starts or ends with a space"
            )
        _not_an_option(value, "write a URL, or a path such as ./-hub.git")
        return value

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        # It becomes part of NATS subject, stream and consumer names.
        if value is not None and not PROJECT_NAME.fullmatch(value):
            raise ValueError(
                f"{json.dumps(value)} is not a project name: write 1 to 32 letters, digits "
                "or '-', such as shop-api"
            )
        return value

    @model_validator(mode="after")
    def _named(self) -> TransportSettings:
        if self.hub is None and self.project is None:
            raise ValueError(
                "set hub (the git repository every host reaches) or project: "
                "the hosts find each other's mail under it"
            )
        return self

    def credentials_path(self, root: str) -> str | None:
        """The absolute path of the credentials file of the project at `root`, if any."""
        if self.credentials is None:
            return None
        project = Path(os.path.abspath(root))  # noqa: PTH100 - ".." removed, symlinks kept
        return str(project / self.credentials)

    def user_password(self, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
        """(user, password) from the environment when no credentials file is given."""
        seen = os.environ if env is None else env
        user = seen.get(NATS_USER_ENV, "")
        if self.credentials is not None or not user:
            return None
        return user, seen.get(NATS_PASSWORD_ENV, "")


def _not_an_option(value: str, instead: str) -> None:
    """Refuse a value that a command would read as one of its options (git's --upload-pack)."""
    if value.startswith("-"):
        raise ValueError(
            f"{json.dumps(shown_url(value))} starts with '-' and would be read as an option: "
            + instead
        )


def _is_server_url(value: str) -> bool:
    """True for nats://host[:port] or tls://host[:port] (a user and password may precede)."""
    try:
        parts = urlsplit(value)
        _ = parts.port  # urlsplit checks the port only when it is read
    except ValueError:
        return False
    return parts.scheme in TRANSPORT_SCHEMES and bool(parts.hostname) and not parts.query
