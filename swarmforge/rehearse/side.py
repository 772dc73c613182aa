"""Side requests, which offer no tools: the scripted model server answers them itself (both
CLIs ask for their session title), in the output format each asks for."""

from __future__ import annotations

import json
from typing import Any

from swarmforge.rehearse.wire import Reply

SIDE_TEXT = "ok"


def _fill(schema: Any) -> Any:
    """A small value matching `schema`."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "object":
        properties = schema.get("properties") or {}
        return {k: _fill(properties.get(k)) for k in schema.get("required") or properties}
    return {"array": [], "integer": 0, "number": 0, "boolean": False}.get(str(kind), SIDE_TEXT)


def side_reply(output_format: Any) -> Reply:
    """The server's own answer to a side request, in the output format it asks for."""
    # Both CLIs ask for their session title as JSON matching a schema.
    if isinstance(output_format, dict) and output_format.get("type") == "json_schema":
        return Reply(text=json.dumps(_fill(output_format.get("schema"))))
    return Reply(text=SIDE_TEXT)
