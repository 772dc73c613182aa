"""What tells a live view that the swarm may have changed, so that it reads only then.

One watch on directory trees (treewatch.py), two kinds of change:

- the swarm's own (`state`): its state directory (the event log, the session record,
  the agents' start and exit records, failed set-ups, planned runs, the main
  checkout's mailbox) and every role's mailbox. Every handoff and every change of an
  agent's state ends up here: read at once.
- the roles' work (`work`): every role's worktree (an edit), the repository's
  branches (a commit), and what agents' hooks say at every tool call. An agent at
  work does these all the time: read at most every few seconds (feed.py decides).

Left out: the roles' output logs (they grow with every line an agent prints; what
they tell about its state comes as an event), the daemon's own directory, the
agents' state records (their supervisors rewrite them every few seconds; a change
of state comes as an event), lock files, the temporaries of atomic writes, and git's
own directories.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from swarmforge import statedir
from swarmforge.git.repo import find_main
from swarmforge.layout import DAEMON_DIR, HANDOFFS, LOGS_DIR, STATE_DIR, WORKTREES_DIR
from swarmforge.treewatch import TreeWatch, within

NOT_STATE = (LOGS_DIR, DAEMON_DIR)  # under the project: written all the time, or not shown
SKIPPED_DIRS = (".git", STATE_DIR)  # in a worktree: git's, and swarmforge's (watched apart)


def temporary(name: str) -> bool:
    """True for the name of an atomic write's temporary file (filewrite.temp_name)."""
    return name.startswith(".") and name.endswith(".tmp")


def _prompt(path: str) -> bool:
    """False for what an agent's hooks write at every tool call (agents/hints.py): its
    supervisor tells a change of state by an event within seconds."""
    return not path.endswith(".hint.json")


class Changes:
    """Watches a project for the views; `take` says what changed since it was last asked.

    `poke` is called from the watch's thread when the first change of a kind after a
    `take` comes in: the view then decides when to read.
    """

    def __init__(self, root: str, poke: Callable[[], None]) -> None:
        self.root = root
        self.poke = poke
        # Strings, as the watch reports the paths that changed.
        project = Path(root)
        self.state_dir = statedir.of(root)
        self.quiet = {statedir.path(root, d) for d in NOT_STATE}
        self.quiet.add(str(project / WORKTREES_DIR))  # each role's worktree is a tree
        main = find_main(root)
        self.branches = str(Path(main.common_dir, "refs", "heads")) if main else None
        self.mailboxes: tuple[str, ...] = ()
        self.lock = threading.Lock()
        self.state = self.work = False
        self.watch = TreeWatch(self._changed, self._skip)

    @property
    def complete(self) -> bool:
        """False when the system refused a watch: then only a timer can tell."""
        return self.watch.complete

    def start(self, worktrees: Iterable[str]) -> None:
        """Start watching the project and these role worktrees."""
        self.watch.start()
        self.aim(worktrees)

    def aim(self, worktrees: Iterable[str]) -> bool:
        """Watch these role worktrees from now on; True if that changed anything."""
        trees = sorted(set(worktrees))
        mailboxes = [statedir.path(t, HANDOFFS) for t in trees if t != self.root]
        with self.lock:
            self.mailboxes = (self.state_dir, *mailboxes)
        wanted = [self.state_dir, *mailboxes, *trees]
        return self.watch.watch(wanted + ([self.branches] if self.branches else []))

    def pending(self) -> tuple[bool, bool]:
        """(the swarm's state changed, a role's work changed) since the last `take`."""
        with self.lock:
            return self.state, self.work

    def take(self) -> tuple[bool, bool]:
        """(the swarm's state changed, a role's work changed) since the last call."""
        with self.lock:
            found = (self.state, self.work)
            self.state = self.work = False
        return found

    def stop(self) -> None:
        """Stop watching."""
        self.watch.stop()

    def _changed(self, path: str) -> None:
        with self.lock:
            # Only the first change of each kind since a take pokes: a build writing a
            # thousand files pokes once.
            if _prompt(path) and any(within(path, box) for box in self.mailboxes):
                first, self.state = not self.state, True
            else:
                first, self.work = not self.work, True
        if first:
            self.poke()

    def _skip(self, path: str) -> bool:
        name = Path(path).name
        if name.endswith((".lock", ".state.json")) or temporary(name):
            return True
        return path in self.quiet or name in SKIPPED_DIRS
