"""Fan-out: a template expanded into one subtask per item, `{{item}}` marking where it goes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationError

from swarmforge.run.spec.canonical import canonical
from swarmforge.run.spec.fieldtypes import STRICT
from swarmforge.run.spec.problems import problem
from swarmforge.run.spec.task import SubtaskSpec

ITEM = "{{item}}"
MAX_ITEMS = 128

_FILLED = frozenset({"id", "command", "dependsOn", "role", "metadata"})


class FanOut(BaseModel):
    """A template expanded into one subtask per item; `{{item}}` marks where the item goes."""

    model_config = STRICT

    items: list[str] = Field(min_length=1, max_length=MAX_ITEMS)
    template: dict[str, Any]


def _fill(value: Any, item: str) -> Any:
    if isinstance(value, str):
        return value.replace(ITEM, item)
    if isinstance(value, list):
        return [_fill(v, item) for v in value]
    if isinstance(value, dict):
        return {key: _fill(v, item) for key, v in value.items()}
    return value


def expand(lead: str, fan: FanOut) -> list[SubtaskSpec]:
    """The subtasks of a fan-out; two items doing the same work, or sharing an id, are refused."""
    subtasks: list[SubtaskSpec] = []
    by_work: dict[str, int] = {}
    by_id: dict[str, int] = {}
    for index, item in enumerate(fan.items):
        raw = {k: _fill(v, item) if k in _FILLED else v for k, v in fan.template.items()}
        try:
            task = SubtaskSpec.model_validate(raw)
        except ValidationError as exc:
            where = f"fan-out of task '{lead}', item '{item}' ({index + 1})"
            raise ValueError(f"{where}: {problem(exc.errors()[0], ('template',))}") from None
        # The same work under two ids is still the same task: compare everything but the id.
        work = canonical(task.model_dump(mode="json", exclude={"id"}))
        for seen, key, what in ((by_work, work, "task"), (by_id, task.id, f"id '{task.id}'")):
            first = seen.setdefault(key, index)
            if first != index:
                raise ValueError(
                    f"fan-out of task '{lead}': items '{fan.items[first]}' ({first + 1}) "
                    f"and '{item}' ({index + 1}) expand to the same {what}"
                )
        subtasks.append(task)
    return subtasks
