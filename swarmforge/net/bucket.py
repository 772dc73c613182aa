"""The project's key-value bucket of heartbeats on the server, made on first use."""

from __future__ import annotations

from nats.js import api
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from swarmforge.net.transport import Transport


def bucket_name(project: str) -> str:
    """The project's bucket of heartbeats."""
    return f"swarmforge-{project}-hosts"


async def open_bucket(transport: Transport) -> KeyValue:
    """The project's bucket, made on first use."""
    name = bucket_name(transport.project)
    try:
        return await transport.js.key_value(name)
    except BucketNotFoundError:
        config = api.KeyValueConfig(bucket=name, history=1, storage=api.StorageType.FILE)
        return await transport.js.create_key_value(config)
