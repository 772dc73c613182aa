"""The workers on other hosts that a run's command tasks go to, connected while it is open.

Nothing here loads nats-py: only a run that uses workers does, when it connects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swarmforge.run.journal.events import Event
    from swarmforge.run.remote.sender import Remote, Workers


@contextmanager
def remote_for(
    root: str,
    run_id: str,
    workers: Workers | None,
    events: Sequence[Event],
    say: Callable[[str], None],
) -> Iterator[Remote | None]:
    """The workers on other hosts that a run's command tasks go to, connected; None for
    a run of this machine alone. Entered before anything is journaled."""
    if workers is None:
        yield None
        return
    from swarmforge.run.remote.sender import Remote  # nats-py only for a run that uses workers

    remote = Remote(root, run_id, workers, events, say)
    try:
        remote.open()
        yield remote
    finally:
        remote.close()
