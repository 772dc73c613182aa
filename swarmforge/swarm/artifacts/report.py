"""What `gc --artifacts` removed (or would remove), what it left alone and why, and what failed."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Artifact:
    """An ignored file or directory removed (or, in a dry run, to be removed)."""

    role: str
    path: str
    bytes: int


@dataclass(frozen=True)
class Skipped:
    """A worktree, or a path in one, the sweep left alone, and why."""

    role: str
    path: str
    reason: str


@dataclass(frozen=True)
class Sweep:
    """What `gc --artifacts` removed, or would remove with `--dry-run`."""

    dry_run: bool
    removed: list[Artifact] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[Skipped] = field(default_factory=list)  # the reason is the error

    @property
    def bytes(self) -> int:
        """Disk freed (or to be freed): hard links shared between removed paths count once."""
        return sum(a.bytes for a in self.removed)

    def as_json(self) -> dict[str, object]:
        shown = asdict(self)
        shown["bytes"] = self.bytes
        return shown
