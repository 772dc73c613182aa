"""Outside text made fit for one line of output or a log: control characters escaped.

On the helpers' path: standard library only, nothing imported.
"""

from __future__ import annotations


def has_control(text: str) -> bool:
    """True if `text` holds a character that could break a line-based header block."""
    return any(
        (ord(c) < 32 and c != "\t") or 0x7F <= ord(c) < 0xA0 or c in "\u2028\u2029" for c in text
    )


def shown(text: str) -> str:
    """`text` fit for one line of output or log: control characters written as escapes."""
    if not has_control(text):
        return text
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") if has_control(c) else c
        for c in text
    )
