"""A spec's validation errors as sentences that name their place in the document."""

from __future__ import annotations

from pydantic_core import ErrorDetails


def _place(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text


def problem(error: ErrorDetails, prefix: tuple[str, ...] = ()) -> str:
    """One validation error as one sentence that names its place in the document."""
    cause = error.get("ctx", {}).get("error")
    message = str(cause) if cause is not None else error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    place = _place((*prefix, *error["loc"]))
    return f"{place}: {message}" if place else message
