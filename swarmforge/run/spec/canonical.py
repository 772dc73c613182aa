"""The canonical JSON of a spec's data: sorted keys, no whitespace, nothing but JSON.

The run id hashes it, so equal data must always give the same text, and data that has
no JSON form (NaN, a set) is refused.
"""

from __future__ import annotations

import json
from typing import Any


def canonical(data: Any) -> str:
    """`data` as canonical JSON; TypeError or ValueError when it has no JSON form."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
