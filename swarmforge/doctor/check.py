"""The outcome of one check of `doctor`: ok, warn or FAIL, what was found, what to do."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "warn", "FAIL"]


@dataclass(frozen=True)
class Check:
    """The outcome of one check: its name, ok/warn/FAIL, what was found, and what to do."""

    check: str
    status: Status
    detail: str
    fix: str = ""
