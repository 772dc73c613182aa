"""Processes a run started: tagging, finding them again, and tearing down whole trees.

Everything a run starts carries SWARMFORGE_RUN_ID and SWARMFORGE_PROJECT in its
environment, so processes that escaped their parent (a dev server started with
`&` or `setsid`) are still found. SWARMFORGE_SCOPE says whose they are: a swarm
session's (`session`) or a planned run's (`run`); tearing one down never ends the
other's. A program an agent starts with an environment of
its own keeps at most the agent's TMPDIR, which is the project's (codex starts a
helper of its sandbox so, and the helper outlives a killed codex): such a process is
the project's too. A zombie counts as dead everywhere.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

import psutil

from swarmforge.tempdirs import project_temp
from swarmforge.waiting import wait_until

RUN_TAG = "SWARMFORGE_RUN_ID"
PROJECT_TAG = "SWARMFORGE_PROJECT"
SCOPE_TAG = "SWARMFORGE_SCOPE"
SESSION, PLANNED_RUN = "session", "run"  # its values
TERM_GRACE = 5.0


def tags(run_id: str, root: str) -> dict[str, str]:
    """The environment entries that mark a process as started by this session."""
    return {RUN_TAG: run_id, PROJECT_TAG: os.path.realpath(root), SCOPE_TAG: SESSION}


def _exempt() -> set[int]:
    # Never this process or its ancestors: `down` may be run from inside the swarm.
    me = psutil.Process()
    return {me.pid, *(p.pid for p in me.parents())}


def _living(wanted: Callable[[dict[str, str]], bool]) -> list[psutil.Process]:
    """Live processes whose environment is `wanted`, this process and its ancestors excepted."""
    exempt = _exempt()
    found = []
    for proc in psutil.process_iter():
        if proc.pid in exempt:
            continue
        try:
            if wanted(proc.environ()) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue  # gone meanwhile, or not ours to read
    return found


def _in_temp(env: dict[str, str], temp_dir: str) -> bool:
    """True if `env` has no tags of ours and its TMPDIR is `temp_dir` or inside it."""
    temp = env.get("TMPDIR", "")
    return PROJECT_TAG not in env and (temp == temp_dir or temp.startswith(temp_dir + os.sep))


def tagged(root: str, run_id: str | None = None, scope: str = SESSION) -> list[psutil.Process]:
    """Live processes of this project's swarm sessions (of session `run_id`, if given), this
    process excepted; without a session, the untagged ones in its agents' temporary
    directories too. Never a planned run's: those are `scope=PLANNED_RUN`'s."""
    project = os.path.realpath(root)
    temp = str(project_temp(root))

    def wanted(env: dict[str, str]) -> bool:
        if run_id is None and scope == SESSION and _in_temp(env, temp):
            return True
        if env.get(PROJECT_TAG) != project or env.get(SCOPE_TAG, SESSION) != scope:
            return False
        return not run_id or env.get(RUN_TAG) == run_id

    return _living(wanted)


def strays(temp_dir: str) -> list[psutil.Process]:
    """Live processes without our tags whose TMPDIR is `temp_dir` (or inside it): what an
    agent with that temporary directory started with an environment of its own."""
    return _living(lambda env: _in_temp(env, temp_dir))


def tree(pid: int) -> list[psutil.Process]:
    """The process `pid` and all its descendants (empty if it is gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


class ProcessTable:
    """Every process and its parent, read in one walk of the process table, on first use.

    psutil's `children` walks the whole table at each call: a read of many roles'
    process trees asks this table instead, for one walk in all.
    """

    def __init__(self) -> None:
        self._procs: dict[int, psutil.Process] | None = None
        self._children: dict[int, list[int]] = {}

    def _read(self) -> dict[int, psutil.Process]:
        if self._procs is None:
            self._procs = {}
            for proc in psutil.process_iter(["ppid"]):
                self._procs[proc.pid] = proc
                ppid = proc.info.get("ppid")
                if ppid is not None and ppid != proc.pid:
                    self._children.setdefault(ppid, []).append(proc.pid)
        return self._procs

    def tree(self, pid: int) -> list[psutil.Process]:
        """The process `pid` and all its descendants, as the table saw them (empty if gone)."""
        procs = self._read()
        found, todo, seen = [], [pid], set()
        while todo:
            current = todo.pop()
            if current in seen or current not in procs:
                continue
            seen.add(current)
            found.append(procs[current])
            todo.extend(self._children.get(current, ()))
        return found


def _running(proc: psutil.Process) -> bool:
    try:
        # is_running also notices a pid reused by a newer process.
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until every process is dead or a zombie; those still running after `timeout`.

    psutil.wait_procs waits for a non-child until it is reaped, which here can
    take seconds after it died; a zombie has already let go of everything.
    """
    wait_until(lambda: not any(_running(p) for p in procs), timeout, 0.01)
    return [p for p in procs if _running(p)]


def terminate(procs: list[psutil.Process], grace: float = TERM_GRACE) -> list[int]:
    """SIGTERM every process, SIGKILL what is left after `grace` seconds; the pids ended."""
    procs = [p for p in procs if p.pid not in _exempt()]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    alive = wait_gone(procs, grace)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    still = wait_gone(alive, grace)
    return [p.pid for p in procs if p not in still]


def terminate_tree(pid: int | None, grace: float = TERM_GRACE) -> list[int]:
    """End process `pid` with all its descendants."""
    return terminate(tree(pid), grace) if pid else []
