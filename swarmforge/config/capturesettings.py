"""`[captures]` of swarmforge.toml: how often each role's work is captured, and how long
captures are kept (see swarmforge/git/captures.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swarmforge.config.fields import duration_seconds


class CaptureSettings(BaseModel):
    """When the daemon captures each role's worktree, and which captures `prune` keeps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # The daemon's captures (after each handoff, and on the timer below); the git guard,
    # `down`, `gc` and `repair` capture whatever this says.
    enabled: bool = True
    # A capture while the worktree changes, at most this often; "off" turns the timer off
    # (captures at handoffs, before teardown and by the git guard are still taken).
    every: str = "60s"
    keep: int = Field(default=200, ge=1)  # captures kept per role; its newest always
    keep_for: str = "336h"  # 14 days; older ones go (the newest of each role stays)

    @field_validator("every")
    @classmethod
    def _every(cls, value: str) -> str:
        if value != "off":
            duration_seconds(value)
        return value

    @field_validator("keep_for")
    @classmethod
    def _duration(cls, value: str) -> str:
        duration_seconds(value)
        return value

    @property
    def every_seconds(self) -> float:
        """The timer's period in seconds; 0 when off."""
        return 0.0 if self.every == "off" else duration_seconds(self.every)

    @property
    def keep_seconds(self) -> float:
        """How long a capture is kept, in seconds."""
        return duration_seconds(self.keep_for)
