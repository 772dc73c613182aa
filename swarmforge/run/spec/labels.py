"""Labels: what a task requires of the worker on another host that runs it."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from swarmforge.run.spec.fieldtypes import refuse

MAX_LABELS = 16

# A label becomes part of a NATS subject and consumer name (swarmforge/run/remote/).
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,31}\Z")


def label_problem(label: str) -> str | None:
    """Why `label` cannot be a label a task requires of its worker."""
    if not LABEL.match(label):
        return (
            f"invalid label '{label}': use one word of 1 to 32 letters, digits or '-', "
            "not starting with '-'"
        )
    return None


def _labels_problem(labels: list[str]) -> str | None:
    for label in labels:
        found = label_problem(label)
        if found:
            return found
    twice = sorted(label for label in set(labels) if labels.count(label) > 1)
    return f"label '{twice[0]}' is listed twice" if twice else None


# Like dependsOn, a set: sorted so that the canonical form stays canonical.
Labels = Annotated[
    list[str], Field(max_length=MAX_LABELS), refuse(_labels_problem), AfterValidator(sorted)
]
