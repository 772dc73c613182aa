"""What `status` judges a role by: the stall threshold and the token budgets, even when
swarmforge.toml cannot be read.
"""

from __future__ import annotations

from swarmforge.config.alertsettings import StallSettings
from swarmforge.config.settings import load_settings
from swarmforge.daemon.budget import limits as budgetlimits
from swarmforge.daemon.budget.limits import Limits
from swarmforge.errors import CorruptFile


def stall_seconds(root: str) -> float:
    """The project's stall threshold; the default when swarmforge.toml cannot be read."""
    try:
        return load_settings(root).stall.seconds
    except CorruptFile:
        return StallSettings().seconds  # `up` names the fault; a status view still works


def budgets(root: str) -> Limits:
    """The project's token budgets; none when swarmforge.toml cannot be read."""
    try:
        return budgetlimits.limits(root)
    except CorruptFile:
        return Limits()  # `up` names the fault; a status view still works
