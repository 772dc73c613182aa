"""An event of the log as one line of text, for a person to read."""

from __future__ import annotations

from swarmforge.events import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def words(value: object) -> str:
    """A field's value for a line of text: lists as `a,b`, objects as compact JSON."""
    if isinstance(value, str):
        return value if value and not any(c.isspace() for c in value) else _quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list) and all(isinstance(v, (str, int)) for v in value):
        return ",".join(str(v) for v in value) or "-"
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _quoted(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def line(event: Mapping[str, object]) -> str:
    """One event as one line of text: time, kind, then its fields as `key=value`."""
    rest = " ".join(f"{k}={words(v)}" for k, v in event.items() if k not in ("ts", "kind"))
    # A hand-edited log may hold anything: nothing it says can move the terminal's cursor.
    return printable(f"{event.get('ts')} {event.get('kind')!s:<18} {rest}".rstrip())
