"""Parking rules: the precedence table, what counts as true, and what decisions mean."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from swarmforge.errors import CorruptFile
from swarmforge.run.parking.decisions import Decision, decisions
from swarmforge.run.parking.rules import METADATA_KEYS, REASONS, park_reason, waiting
from swarmforge.run.spec.file import load_spec
from swarmforge.run.spec.task import SubtaskSpec
from swarmforge.run.spec.toplevel import TaskSpec


@dataclass
class Task:
    """Only what park classification reads; lets the table try values a spec refuses."""

    metadata: dict[str, Any] = field(default_factory=dict)
    irreversible: bool = False
    tier: str = "T1"


ALL_TRUE = {"legal": True, "security": True, "irreversible": True}


@pytest.mark.parametrize(
    ("metadata", "irreversible", "tier", "reason"),
    [
        # 1. metadata legal beats everything.
        (ALL_TRUE, True, "T4", "legal"),
        ({"legal": True}, False, "T1", "legal"),
        # 2. then metadata security.
        ({"legal": False, "security": True, "irreversible": True}, True, "T4", "security"),
        ({"security": True}, False, "T1", "security"),
        # 3. then metadata irreversible.
        ({"legal": False, "security": False, "irreversible": True}, False, "T4", "irreversible"),
        # 4. then the irreversible flag.
        ({}, True, "T4", "irreversible"),
        ({"legal": False, "security": False, "irreversible": False}, True, "T1", "irreversible"),
        # 5. then tier T4.
        ({}, False, "T4", "tier-t4"),
        ({"legal": False}, False, "T4", "tier-t4"),
        # Nothing applies.
        ({}, False, "T1", None),
        ({}, False, "T3", None),
        ({"prompt": "x", "owner": True}, False, "T2", None),
    ],
)
def test_precedence(metadata: dict[str, Any], irreversible: bool, tier: str, reason: str) -> None:
    assert park_reason(Task(metadata, irreversible, tier)) == reason


@pytest.mark.parametrize("key", METADATA_KEYS)
@pytest.mark.parametrize("value", [False, None, "true", "True", "yes", 1, 1.0, [True], {"x": 1}])
def test_only_the_boolean_true_parks(key: str, value: Any) -> None:
    assert park_reason(Task({key: value})) is None
    assert park_reason(Task({key: value}, tier="T4")) == "tier-t4"


def test_a_falsy_metadata_key_does_not_hide_a_later_true_one() -> None:
    assert park_reason(Task({"legal": "true", "security": True})) == "security"


def test_every_metadata_key_parks_with_itself_as_the_reason() -> None:
    for key in METADATA_KEYS:
        assert park_reason(Task({key: True})) == key and key in REASONS


def test_spec_tasks_and_subtasks_are_classified() -> None:
    assert park_reason(TaskSpec(id="t", command=["x"], tier="T4")) == "tier-t4"
    assert park_reason(SubtaskSpec(id="s", role="coder", metadata={"legal": True})) == "legal"
    assert park_reason(SubtaskSpec(id="s", command=["x"], irreversible=True)) == "irreversible"
    assert park_reason(SubtaskSpec(id="s", command=["x"])) is None


def test_a_spec_refuses_a_park_key_that_is_not_a_boolean(tmp_path: Path) -> None:
    # Read as false, a misspelt true would run a legal task unattended.
    path = tmp_path / "spec.toml"
    path.write_text(
        'goal = "g"\n[[tasks]]\nid = "t"\ncommand = ["x"]\nmetadata = {legal = "yes"}\n'
    )
    with pytest.raises(CorruptFile) as caught:
        load_spec(str(path))
    assert caught.value.problem == "tasks[0].metadata: 'legal' must be true or false, not 'yes'"


def test_an_approved_task_no_longer_waits() -> None:
    tasks = [
        TaskSpec(id="deploy", command=["x"], tier="T4"),
        TaskSpec(id="audit", command=["x"], metadata={"legal": True}),
        TaskSpec(id="build", command=["x"]),
    ]
    assert waiting(tasks, set()) == {"deploy": "tier-t4", "audit": "legal"}
    assert waiting(tasks, {"deploy"}) == {"audit": "legal"}


def test_decisions_concern_only_parked_tasks_and_a_rejection_wins() -> None:
    statuses = {"a": "parked", "b": "parked", "c": "ready", "d": "parked"}
    assert decisions(statuses, approved={"a", "b", "c"}, rejected={"b"}) == [
        Decision("a", "approved"),
        Decision("b", "rejected"),
    ]
