"""A role's own state files, and what keeps any of them from being read.

Each is read only if it is a regular file no larger than its readers accept: a FIFO
put in the place of one is never waited on, and a huge one never loaded. Its readers
then take it as missing; `status` names it, so that it can be removed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from swarmforge import fsutil, records, statedir
from swarmforge.agents import conversation, hints, lifecycle, staterecord
from swarmforge.layout import LOGS_DIR


def state_files(root: str, role: str) -> list[tuple[Path, int | None]]:
    """Each state file of `role`, and the most bytes its readers accept (None: any size,
    as for its output log, of which only the end is read)."""
    return [
        (lifecycle.life_path(root, role), records.RECORD_LIMIT),
        (staterecord.state_path(root, role), records.RECORD_LIMIT),
        (hints.hint_path(root, role), hints.HINT_LIMIT),
        (conversation.conversation_path(root, role), conversation.RECORD_LIMIT),
        (Path(statedir.path(root, LOGS_DIR), f"{role}.log"), None),
    ]


def unreadable(root: str, role: str) -> list[str]:
    """A sentence for each state file of `role` that its readers refuse; [] when none."""
    found = []
    for path, limit in state_files(root, role):
        try:
            st = os.lstat(path)
        except OSError:
            continue  # missing, or its directory unreadable: nothing to refuse
        if not stat.S_ISREG(st.st_mode):
            found.append(f"{path} is {fsutil.kind_of(st.st_mode)}, not a regular file: remove it")
        elif limit is not None and st.st_size > limit:
            found.append(f"{path} is larger than {limit:,} bytes: remove it")
    return found
