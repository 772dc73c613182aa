"""The token budgets swarmforge.toml sets: the swarm's, and each role's that has one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from swarmforge.config.settings import Settings, load_settings


@dataclass(frozen=True)
class Limits:
    """The budgets swarmforge.toml sets: the swarm's, and each role's that has one."""

    swarm: int | None = None
    roles: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        """The budgets of `settings`."""
        roles = {name: s.budget.tokens for name, s in settings.roles.items()}
        return cls(settings.budget.tokens, {n: t for n, t in roles.items() if t is not None})

    def role(self, name: str) -> int | None:
        """Role `name`'s budget, or None."""
        return self.roles.get(name)


def limits(root: str) -> Limits:
    """The budgets of the project at `root`; CorruptFile if swarmforge.toml is broken."""
    return Limits.of(load_settings(root))
