"""Outside text made fit for one line of output or a log: control characters escaped, a
URL's password hidden.

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


# Schemes whose user part names an account, never a secret: shown as it is.
ACCOUNT_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git"})


def shown_url(url: str) -> str:
    """`url` fit to show or log: a password in it written `***`.

    A user given without a password is written `***` as well (nats://TOKEN@host and
    https://TOKEN@host carry a token there), except for ssh, where it names an account.
    A path, or git's user@host:path, is returned as it is.
    """
    from urllib.parse import urlsplit  # only where a URL is shown: never on the helpers' path

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    login, at, place = parts.netloc.rpartition("@")
    user, colon, _ = login.partition(":")
    if not at or (not colon and parts.scheme in ACCOUNT_SCHEMES):
        return url
    hidden = f"{user}:***" if colon else "***"
    # The first place the login appears is right after "scheme://".
    return url.replace(parts.netloc, f"{hidden}@{place}", 1)
