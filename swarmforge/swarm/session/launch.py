"""Starting a session's processes: the delivery daemon, then the roles in tmux or the
headless runner, and the sleep inhibitor.
"""

from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path

from swarmforge import logfile, statedir, tagging
from swarmforge.config import rolerecord, sessionrecord
from swarmforge.config.roster import SwarmConfig
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import load_settings
from swarmforge.daemon import starting
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import RUNNER_LOCK, RUNNER_PID
from swarmforge.locks import is_held
from swarmforge.proc import detach
from swarmforge.swarm import placement, rolecommand
from swarmforge.swarm.bootstrap import marks
from swarmforge.swarm.pacer import Pacer, follow
from swarmforge.swarm.session.progress import Progress
from swarmforge.waiting import wait_until

STAGGER = {"tmux": 1.0, "headless": 0.0}


START_TIMEOUT = 15.0


def start(
    root: str,
    config: SwarmConfig,
    record: SessionRecord,
    stagger: float | None,
    inhibit_sleep: bool,
    progress: Progress,
) -> None:
    tag_env = tagging.tags(record.run_id, root)
    if inhibit_sleep:
        record.inhibitor_pid = _start_inhibitor(tag_env)
        sessionrecord.save(root, record)
    kind = "tmux" if record.backend == "tmux" else "none"
    pid, _ = starting.start(root, ["--notify", kind], env=tag_env)
    progress(f"delivery daemon running (pid {pid})")
    if record.backend == "tmux":
        pause = STAGGER["tmux"] if stagger is None else stagger
        start_tmux(root, config, record, pause, progress)
    else:
        # The runner records its own pid and its roles' pids in the session record.
        since = time.time()
        progress(f"runner started (pid {_start_runner(root, tag_env)})")
        # The runner paces its agents' starts itself; `up` tells how far it got.
        agents = [role.name for role in marks.ready(root, record.roles) if not role.is_exec]
        caps = load_settings(root).start
        running = partial(is_held, statedir.path(root, RUNNER_LOCK))
        follow(root, record.run_id, agents, caps, since, running, progress)


def start_tmux(
    root: str, config: SwarmConfig, record: SessionRecord, stagger: float, progress: Progress
) -> None:
    from swarmforge.tmux.server import Tmux, project_socket
    from swarmforge.tmux.spec import SessionSpec

    tmux = Tmux(project_socket(root))
    specs = []
    for role in marks.ready(root, record.roles):  # a setup-failed role is not started
        # Only the role's own variables: the panes inherit the rest from the server,
        # and tmux refuses commands longer than about 16 KB.
        env = rolerecord.role_vars(root, record.run_id, role)
        # Checked here, so that a missing agent stops `up` before any session starts.
        rolecommand.command(
            root, config, role, rolerecord.role_env(root, record.run_id, role), "tmux"
        )
        argv = [sys.executable, "-m", "swarmforge", "pane", "--project", root, role.name]
        # An exec role's loop keeps its own log; an agent's screen is the log.
        log = None if role.is_exec else placement.log_file(root, role.name)
        specs.append(SessionSpec(role.session_name, role.path, argv, env, log))
    # Agents start as `[start]` allows; exec roles run plain commands and are not paced.
    agents = {role.session_name: role.name for role in record.roles if not role.is_exec}
    missing = [spec for spec in specs if spec.name in agents and not tmux.has_session(spec.name)]
    caps = load_settings(root).start
    pacer = Pacer(root, record.run_id, caps, len(missing), progress)

    def gate(spec: SessionSpec) -> None:
        if spec.name in agents:
            pacer.wait()
            pacer.started(agents[spec.name])

    for name in tmux.start_all(specs, stagger, gate=gate):
        progress(f"started tmux session {name}")


def _start_runner(root: str, tag_env: dict[str, str]) -> int:
    argv = [sys.executable, "-m", "swarmforge", "supervise", "--project", root]
    log = logfile.open_log(placement.log_file(root, "runner"))  # a FIFO there is refused
    try:
        detach.detach(argv, cwd=root, extra=tag_env, log=log)
    finally:
        os.close(log)
    pid_file = Path(statedir.path(root, RUNNER_PID))
    lock = statedir.path(root, RUNNER_LOCK)
    if wait_until(lambda: is_held(lock) and pid_file.exists(), START_TIMEOUT):
        return int(pid_file.read_text(encoding="ascii").strip())
    raise SwarmforgeError(
        "The swarm runner did not start.", hint=f"See {placement.log_file(root, 'runner')}."
    )


def _start_inhibitor(tag_env: dict[str, str]) -> int | None:
    from swarmforge.proc.awake import sleep_inhibitor_argv

    argv = sleep_inhibitor_argv()
    if argv is None:
        return None
    return detach.detach(argv, extra=tag_env)
