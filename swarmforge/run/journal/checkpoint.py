"""Checkpoints of a run's journal (`checkpoint.json`): every task's state at one seq.

A checkpoint taken at seq S holds every task's state after all events before S:
take it with `write_checkpoint(run_dir, journal.next_seq, ...)`, then append the
`checkpoint` event, which gets seq S. A crash between the two leaves a
checkpoint.json ahead of the journal by one, which resumes correctly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from swarmforge import filewrite
from swarmforge.records import read_json_model
from swarmforge.run.taskgraph import Status

CHECKPOINT = "checkpoint.json"


class Checkpoint(BaseModel):
    """checkpoint.json: every task's state after all events before `seq`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    seq: int = Field(ge=1)
    states: dict[str, Status]
    parked: list[str]


def write_checkpoint(
    run_dir: str, seq: int, states: Mapping[str, str], parked: Iterable[str]
) -> Checkpoint:
    """Atomically write checkpoint.json: the states after every event before `seq`."""
    checkpoint = Checkpoint.model_validate(
        {"seq": seq, "states": dict(states), "parked": list(parked)}
    )
    data = checkpoint.model_dump_json(indent=1).encode() + b"\n"
    filewrite.atomic_write(str(Path(run_dir) / CHECKPOINT), data)
    return checkpoint


def read_checkpoint(run_dir: str) -> Checkpoint | None:
    """The run's checkpoint.json, or None if it has none; CorruptFile if it is damaged."""
    return read_json_model(str(Path(run_dir) / CHECKPOINT), Checkpoint)
