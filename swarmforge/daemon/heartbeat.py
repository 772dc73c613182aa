"""This host's heartbeat: its roles, ports, branches and states, read from files only."""

from __future__ import annotations

import socket
import time

from swarmforge.agents import lifecycle, staterecord
from swarmforge.config import sessionrecord
from swarmforge.errors import CorruptFile
from swarmforge.net.beats import HostBeat, RoleBeat, wire_name


def local_beat(root: str, pid: int) -> HostBeat | None:
    """This host's beat, from the session record and the agents' life and state files;
    None without a (readable) session record. `pid`: the daemon's.

    It reads files only (no git, no tmux): the daemon builds one every few seconds.
    """
    try:
        record = sessionrecord.load(root)
    except CorruptFile:
        return None  # the daemon and `status` name the damage
    if record is None:
        return None
    return HostBeat(
        host=wire_name(record.host),
        primary=record.host is None,
        machine=socket.gethostname(),
        pid=pid,
        sent_at=time.time(),
        run_id=record.run_id,
        run_state=record.state,
        roles=[
            _role_beat(root, record.run_id, record.state, r.name, r.branch, r.port)
            for r in record.roles
        ],
    )


def _role_beat(root: str, run_id: str, state: str, name: str, branch: str, port: int) -> RoleBeat:
    if state != "running":
        return RoleBeat(name=name, branch=branch, port=port, process="stopped")
    life = lifecycle.load(root, name, run_id)
    judged = staterecord.load_record(root, name, run_id)
    return RoleBeat(
        name=name,
        branch=branch,
        port=port,
        agent=judged.state if judged else None,
        process=life.state if life else None,
    )
