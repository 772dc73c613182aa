"""Run specs: the validated task tree of a planned run, its canonical form and its run id.

Every check that can fail before anything is journaled runs inside validation: id
syntax, the shape of each task, fan-out expansion, unique ids over the whole tree,
dependencies between siblings only, and dependency cycles.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic_core import ErrorDetails

from swarmforge.roletable import role_name_problem
from swarmforge.run.parking import METADATA_KEYS

Tier = Literal["T1", "T2", "T3", "T4"]

ITEM = "{{item}}"
MAX_ID = 64
MAX_ITEMS = 128
MAX_CONCURRENCY = 256
MAX_LABELS = 16

_T = TypeVar("_T")
_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
# A label becomes part of a NATS subject and consumer name (swarmforge/run/remote/stream.py).
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,31}\Z")
_FILLED = frozenset({"id", "command", "dependsOn", "role", "metadata"})
# strict: a spec says `true` and `4`, never `"yes"` or `"4"`; forbid: a typo is an error.
_STRICT = ConfigDict(strict=True, extra="forbid")


def id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot name a task (it becomes a file name and a git ref component)."""
    if not _ID.match(task_id) or len(task_id) > MAX_ID:
        return (
            f"invalid task id '{task_id}': use 1 to {MAX_ID} letters, digits, '-', '_' or '.', "
            "not starting with '.' or '-'"
        )
    if ".." in task_id or task_id.endswith((".", ".lock")):
        return f"invalid task id '{task_id}': git refuses '..', a trailing '.' or '.lock' in a ref"
    return None


def _command_problem(argv: list[str]) -> str | None:
    if not argv or not argv[0]:
        return "a command needs a program: its first element is missing or empty"
    return "a command argument cannot contain NUL" if any("\0" in a for a in argv) else None


def _depends_problem(deps: list[str]) -> str | None:
    twice = sorted(dep for dep in set(deps) if deps.count(dep) > 1)
    return f"'{twice[0]}' is listed twice" if twice else None


def _metadata_problem(metadata: dict[str, Any]) -> str | None:
    # A park key that is not a boolean is refused: read as false, it would run the task unattended.
    for key in METADATA_KEYS:
        if key in metadata and not isinstance(metadata[key], bool):
            return f"'{key}' must be true or false, not {metadata[key]!r}"
    try:
        _canonical(metadata)  # the run id hashes it: it needs one JSON form
    except (TypeError, ValueError) as exc:
        return f"not a JSON value: {exc}"
    return None


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


def _no_shell(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError('a command is an argv list such as ["make", "test"], not a shell string')
    return value


def refuse(problem: Callable[[_T], str | None]) -> AfterValidator:
    """A validator that refuses a value for which `problem` says why (in one line)."""

    def check(value: _T) -> _T:
        message = problem(value)
        if message:
            raise ValueError(message)
        return value

    return AfterValidator(check)


TaskId = Annotated[str, refuse(id_problem)]
Command = Annotated[list[str], BeforeValidator(_no_shell), refuse(_command_problem)]
# The order of dependencies means nothing; sorting keeps the canonical form canonical.
DependsOn = Annotated[list[str], refuse(_depends_problem), AfterValidator(sorted)]
Metadata = Annotated[dict[str, Any], refuse(_metadata_problem)]
RoleName = Annotated[str, refuse(role_name_problem)]
# Like dependsOn, a set: sorted so that the canonical form stays canonical.
Labels = Annotated[
    list[str], Field(max_length=MAX_LABELS), refuse(_labels_problem), AfterValidator(sorted)
]
Goal = Annotated[str, refuse(lambda goal: None if goal.strip() else "a run needs a goal")]


class _Fields(BaseModel):
    """What every task has, lead or worker."""

    model_config = _STRICT

    id: TaskId
    command: Command | None = None
    dependsOn: DependsOn = Field(default_factory=list)
    isolate: bool = False
    background: bool = False
    tier: Tier = "T1"
    irreversible: bool = False
    metadata: Metadata = Field(default_factory=dict)
    role: RoleName | None = None
    labels: Labels = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_no_labels(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Labels came later than the other fields: a task without any is written as it
        # was before them, so the run id of every earlier spec stays the same.
        data: dict[str, Any] = handler(self)
        if not data.get("labels"):
            data.pop("labels", None)
        return data

    def _check_action(self, *, lead: bool) -> None:
        if lead and (self.command is not None or self.role is not None):
            raise ValueError(
                f"task '{self.id}' is a lead (it has subtasks): it cannot have a command or a role"
            )
        if not lead and (self.command is None) == (self.role is None):
            raise ValueError(f"task '{self.id}' needs exactly one of command or role")
        if self.background and self.command is None:
            raise ValueError(f"background task '{self.id}' needs a command")
        if self.labels and (self.command is None or self.background):
            # Only a plain command goes to a worker on another host (`run --workers`).
            raise ValueError(f"task '{self.id}' has labels: only a plain command task can")
        if self.background and self.isolate:
            # A detached process outlives the task, and so would outlive its worktree.
            raise ValueError(f"background task '{self.id}' cannot be isolated")


class SubtaskSpec(_Fields):
    """A worker: a subtask of a lead, always a leaf (depth 2)."""

    @model_validator(mode="before")
    @classmethod
    def _leaf(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("subtasks" in data or "fanOut" in data):
            raise ValueError(
                f"subtask '{data.get('id')}' cannot carry subtasks: the depth bound is "
                "orchestrator (0) -> lead (1) -> worker (2), and a worker is a leaf"
            )
        return data

    @model_validator(mode="after")
    def _check_shape(self) -> SubtaskSpec:
        self._check_action(lead=False)
        return self


class FanOut(BaseModel):
    """A template expanded into one subtask per item; `{{item}}` marks where the item goes."""

    model_config = _STRICT

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


def _expand(lead: str, fan: FanOut) -> list[SubtaskSpec]:
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
        work = _canonical(task.model_dump(mode="json", exclude={"id"}))
        for seen, key, what in ((by_work, work, "task"), (by_id, task.id, f"id '{task.id}'")):
            first = seen.setdefault(key, index)
            if first != index:
                raise ValueError(
                    f"fan-out of task '{lead}': items '{fan.items[first]}' ({first + 1}) "
                    f"and '{item}' ({index + 1}) expand to the same {what}"
                )
        subtasks.append(task)
    return subtasks


class TaskSpec(_Fields):
    """A top-level task (depth 1): a worker, or a lead when it has subtasks or a fan-out."""

    subtasks: list[SubtaskSpec] = Field(default_factory=list)
    # Replaced by its expansion in `subtasks` once validated, so the canonical form of a
    # fan-out is the canonical form of the tasks it stands for.
    fanOut: FanOut | None = None

    @model_validator(mode="after")
    def _check_shape(self) -> TaskSpec:
        if self.fanOut is not None:
            if self.subtasks:
                raise ValueError(f"task '{self.id}' has both subtasks and fanOut: use one")
            self.subtasks, self.fanOut = _expand(self.id, self.fanOut), None
        self._check_action(lead=self.is_lead)
        return self

    @property
    def is_lead(self) -> bool:
        """True when the task runs subtasks rather than a command or a role."""
        return bool(self.subtasks)


class Ramp(BaseModel):
    """Concurrency starts at `initial` and grows by `step` after each task that ends done."""

    model_config = _STRICT

    initial: int = Field(ge=1, le=MAX_CONCURRENCY)
    step: int = Field(ge=1, le=MAX_CONCURRENCY)


def _check_unique(tasks: Sequence[TaskSpec]) -> None:
    places: dict[str, str] = {}
    for i, task in enumerate(tasks):
        tree = [(task.id, f"tasks[{i}]")]
        tree += [(sub.id, f"tasks[{i}].subtasks[{j}]") for j, sub in enumerate(task.subtasks)]
        for task_id, place in tree:
            first = places.setdefault(task_id, place)
            if first != place:
                raise ValueError(f"duplicate task id '{task_id}': {first} and {place}")


def _find_cycle(deps: dict[str, list[str]]) -> list[str] | None:
    """One dependency cycle as a closed path (`a, b, a`), or None; iterative, for long chains."""
    state: dict[str, str] = {}
    for root in deps:
        if root in state:
            continue
        path, todo, state[root] = [root], [iter(deps[root])], "open"
        while todo:
            dep = next(todo[-1], None)
            if dep is None:
                state[path.pop()] = "closed"
                todo.pop()
            elif state.get(dep) == "open":
                return [*path[path.index(dep) :], dep]
            elif dep not in state:
                path.append(dep)
                todo.append(iter(deps[dep]))
                state[dep] = "open"
    return None


def _check_level(siblings: Sequence[_Fields], everyone: set[str], level: str) -> None:
    names = {task.id for task in siblings}
    for task in siblings:
        for dep in task.dependsOn:
            if dep == task.id:
                raise ValueError(f"task '{task.id}' depends on itself")
            if dep in everyone and dep not in names:
                raise ValueError(
                    f"task '{task.id}' depends on '{dep}', which is not one of the {level}: "
                    "dependsOn names siblings only"
                )
            if dep not in names:
                raise ValueError(f"task '{task.id}' depends on unknown task '{dep}'")
    cycle = _find_cycle({task.id: task.dependsOn for task in siblings})
    if cycle:
        raise ValueError(f"dependency cycle: {' -> '.join(cycle)}")


class RunSpec(BaseModel):
    """A planned run: its goal, its concurrency, and its tasks in priority order."""

    model_config = _STRICT

    goal: Goal
    maxConcurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    ramp: Ramp | None = None
    tasks: list[TaskSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_tree(self) -> RunSpec:
        if self.ramp is not None and self.ramp.initial > self.maxConcurrency:
            raise ValueError(
                f"ramp.initial ({self.ramp.initial}) exceeds maxConcurrency ({self.maxConcurrency})"
            )
        _check_unique(self.tasks)
        everyone = {task.id for _, task, _ in flatten(self)}
        _check_level(self.tasks, everyone, "top-level tasks")
        for task in self.tasks:
            _check_level(task.subtasks, everyone, f"subtasks of task '{task.id}'")
        return self


def flatten(spec: RunSpec) -> list[tuple[int, TaskSpec | SubtaskSpec, str | None]]:
    """Every task of the tree as (depth, task, parent id), leads before their subtasks."""
    out: list[tuple[int, TaskSpec | SubtaskSpec, str | None]] = []
    for task in spec.tasks:
        out.append((1, task, None))
        out.extend((2, sub, task.id) for sub in task.subtasks)
    return out


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)


def canonical_json(spec: RunSpec) -> str:
    """The spec as canonical JSON: sorted keys, no whitespace, every default spelled out."""
    return _canonical(spec.model_dump(mode="json"))


def run_id(spec: RunSpec) -> str:
    """The content-addressed id of a run: the same spec always names the same run."""
    return "run-" + hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()[:16]


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
