"""A planned-run worker's own clone of the hub, and the checkouts its tasks run in.

The worker never touches any repository but its clone (`<dir>/clone`), made on
first use. Before a task it fetches the run's base commit from the hub, unless it
has it already (`refs/swarmforge/runs/<runId>/base`, where the orchestrator pushed
it). An isolated task runs in a fresh worktree of the clone on branch
`swarm/<runId>/<taskId>` at the base (git/isolation.py, as on the orchestrator's
host); afterwards the branch is pushed to the hub, and uncommitted work to
`refs/swarmforge/rescue/<runId>/<taskId>`. The other tasks of a run share one
detached scratch worktree at the base (`<dir>/scratch/<runId>`), as local ones share
the project's checkout; those are removed when the worker stops or starts.

Everything goes through the git CLI (git/command.py), and to the hub by its URL, after
`--` and with net/hub.py's PROTOCOLS: the clone has no remote configured.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.git import repo
from swarmforge.git.command import GitFailed, git, run
from swarmforge.git.isolation import Isolation, isolated, worktree_name
from swarmforge.git.names import branch_name, rescue_ref
from swarmforge.git.objects import lookup
from swarmforge.git.removing import remove
from swarmforge.git.rescue import snapshot
from swarmforge.net.hub import PROTOCOLS, quiet_env
from swarmforge.run.remote.base import base_ref
from swarmforge.text import shown_url


def _last_line(exc: GitFailed) -> str:
    return exc.message.rstrip(".")


class Clone:
    """The worker's clone of `hub` under `directory`."""

    def __init__(self, directory: str, hub: str) -> None:
        top = Path(directory).absolute()
        self.dir = str(top)
        self.hub = hub
        self.path = str(top / "clone")
        self.scratch_dir = top / "scratch"
        # The jobs of one worker share the clone: one git command changes it at a time
        # (its refs, its worktree list); the tasks' commands themselves run side by side.
        self.lock = threading.RLock()

    def check_hub(self) -> None:
        """SwarmforgeError in one line when the hub cannot be read from here."""
        found = run(
            self.dir, "ls-remote", "--heads", "--", self.hub, env=quiet_env(), options=PROTOCOLS
        )
        if not found.ok:
            lines = found.stderr.decode(errors="replace").strip().splitlines()
            said = f": {lines[-1]}" if lines else ""
            raise SwarmforgeError(f"cannot reach the hub {shown_url(self.hub)}{said}")

    def ensure(self) -> None:
        """Make the clone if it does not exist yet, and clear what a killed worker left."""
        Path(self.dir).mkdir(parents=True, exist_ok=True)
        if not self._made():
            shutil.rmtree(self.path, ignore_errors=True)  # a half-made one
            git(self.dir, "init", "--quiet", self.path)
        self.clear_scratch()

    def _made(self) -> bool:
        """True once the clone exists (its `.git` is a directory)."""
        return (Path(self.path) / ".git").is_dir()

    def fetch_base(self, run_id: str, commit: str) -> None:
        """Have `commit` (run `run_id`'s base) in the clone, fetched from the hub if missing."""
        with self.lock:
            self._fetch_base(run_id, commit)

    def _fetch_base(self, run_id: str, commit: str) -> None:
        if lookup(self.path, commit).commit is None:
            ref = base_ref(run_id)
            try:
                git(
                    self.path,
                    "fetch",
                    "--quiet",
                    "--no-tags",
                    "--",
                    self.hub,
                    f"+{ref}:{ref}",
                    env=quiet_env(),
                    options=PROTOCOLS,
                )
            except GitFailed as exc:
                raise SwarmforgeError(
                    f"cannot fetch {ref} from the hub: {_last_line(exc)}"
                ) from None
            if lookup(self.path, commit).commit is None:
                # The ref moved on (the run was resumed from another commit): ask for the commit.
                fetch = ("fetch", "--quiet", "--no-tags", "--", self.hub, commit)
                run(self.path, *fetch, env=quiet_env(), options=PROTOCOLS)
            if lookup(self.path, commit).commit is None:
                raise SwarmforgeError(f"the hub has no commit {commit}")
        checkout = repo.open_checkout(self.path)
        if checkout is None or checkout.head is None:
            # Worktrees need a main checkout with a commit: the first base will do.
            git(self.path, "checkout", "--quiet", "--detach", commit)

    # -- scratch checkouts ------------------------------------------------------------------

    def scratch(self, run_id: str, commit: str) -> str:
        """The scratch worktree of run `run_id` at `commit` (made, or remade at a new base)."""
        worktree = self.scratch_dir / run_id
        path = str(worktree)
        with self.lock:
            if worktree.is_dir():
                if lookup(path, "HEAD").commit == commit:
                    return path
                self._drop_scratch(path)
            self.scratch_dir.mkdir(parents=True, exist_ok=True)
            git(self.path, "worktree", "add", "--quiet", "--force", "--detach", path, commit)
            return path

    def clear_scratch(self) -> None:
        """Remove every scratch worktree."""
        if self.scratch_dir.is_dir():
            for worktree in sorted(self.scratch_dir.iterdir()):
                self._drop_scratch(str(worktree))
        if self._made():
            run(self.path, "worktree", "prune")

    def _drop_scratch(self, path: str) -> None:
        if run(self.path, "worktree", "remove", "--force", "--force", path).ok:
            return
        shutil.rmtree(path, ignore_errors=True)  # not (or no longer) a registered worktree
        run(self.path, "worktree", "prune")

    # -- isolated checkouts -----------------------------------------------------------------

    @contextmanager
    def isolated(
        self, run_id: str, task_id: str, commit: str, port: int | None
    ) -> Iterator[Isolation]:
        """A fresh worktree of the task on its branch at `commit`, removed afterwards."""
        stack = ExitStack()
        with self.lock:
            # What an earlier run of the same task here left (a killed worker): gone
            # first, so that the task starts at the base again.
            remove(
                self.path, worktree_name(run_id, task_id), rescue_ref=rescue_ref(run_id, task_id)
            )
            branch = branch_name(run_id, task_id)
            if lookup(self.path, f"refs/heads/{branch}").commit is not None:
                git(self.path, "branch", "--quiet", "-D", branch)
            iso = stack.enter_context(isolated(self.path, run_id, task_id, base=commit, port=port))
        try:
            yield iso
        finally:
            with self.lock:
                stack.close()

    def push(self, run_id: str, task_id: str, iso: Isolation) -> str | None:
        """Push the task's branch, and its uncommitted work if any, to the hub; the rescue
        ref pushed, or None when the worktree was clean."""
        with self.lock:
            return self._push(run_id, task_id, iso)

    def _push(self, run_id: str, task_id: str, iso: Isolation) -> str | None:
        specs = [f"+refs/heads/{iso.branch}:refs/heads/{iso.branch}"]
        checkout = repo.open_checkout(iso.path)
        rescued = None
        if checkout is not None:
            message = f"swarmforge: uncommitted work of task {task_id} of run {run_id}"
            commit = snapshot(checkout, message)
            if commit is not None:
                rescued = rescue_ref(run_id, task_id)
                specs.append(f"+{commit}:{rescued}")
        try:
            push = ("push", "--quiet", "--no-verify", "--", self.hub, *specs)
            git(self.path, *push, env=quiet_env(), options=PROTOCOLS)
        except GitFailed as exc:
            raise SwarmforgeError(
                f"cannot push {iso.branch} to the hub: {_last_line(exc)}"
            ) from None
        return rescued
