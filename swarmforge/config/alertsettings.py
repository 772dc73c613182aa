"""`[stall]`, `[budget]` and `[notify]` of swarmforge.toml: when a role is reported, and to whom."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, field_validator

from swarmforge.config.fields import duration_seconds


class StallSettings(BaseModel):
    """When an agent with work in hand and no activity counts as stalled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after: str = "15m"

    @field_validator("after")
    @classmethod
    def _duration(cls, value: str) -> str:
        duration_seconds(value)
        return value

    @property
    def seconds(self) -> float:
        """The threshold in seconds."""
        return duration_seconds(self.after)


class BudgetSettings(BaseModel):
    """How many tokens a role, or the whole swarm, may spend in one run before it is
    reported (see swarmforge/daemon/budget/); none by default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens: int | None = None

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens(cls, value: object) -> object:
        # Checked before pydantic's own coercion, which would take "5" or 5.0 for 5.
        if type(value) is not int or value <= 0:
            shown = json.dumps(value, default=str)
            raise ValueError(
                f"{shown} is not a number of tokens: write a whole number above zero, "
                "such as 2_000_000"
            )
        return value


class NotifySettings(BaseModel):
    """A command of the user's to run on chosen events (see swarmforge/daemon/alerts/)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: list[str] = []
    on: list[str] = [
        "waiting",
        "stalled",
        "exited",
        "handoff-failed",
        "run-finished",
        "budget-crossed",
    ]

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str]) -> list[str]:
        if value and not value[0].strip():
            raise ValueError("the command's first word, the program, is empty")
        return value
