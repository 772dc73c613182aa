"""What `up` and `down` say as they go: each line handed to a callable, or to none."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]


def quiet(message: str) -> None:
    """Say nothing."""
