"""The two ready-made notification commands: `notify-send` on the desktop, and the terminal bell."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from swarmforge import eventline
from swarmforge.errors import SwarmforgeError
from swarmforge.proc import spawn


def summary(note: Mapping[str, object]) -> tuple[str, str]:
    """A title and one line of text for the notification `note` (see `payload`)."""
    trigger = str(note.get("trigger") or note.get("kind") or "event")
    burst = note.get("events")
    if isinstance(burst, list) and burst and isinstance(burst[0], dict):
        return f"swarmforge: {note.get('count')} x {trigger}", eventline.line(burst[-1])
    return f"swarmforge: {trigger}", eventline.line(note)


def notify_send(data: str) -> None:
    """Show the notification whose JSON is `data` on the desktop, through notify-send."""
    title, text = summary(_note(data))
    done = spawn.run(["notify-send", "--app-name=swarmforge", title, text])
    if not done.ok:
        said = done.stderr.decode(errors="replace").strip()
        raise SwarmforgeError(f"notify-send failed: {said or f'exit {done.returncode}'}")


def bell(root: str) -> int:
    """Ring the terminal of every tmux client attached to the swarm of `root`; how many."""
    from swarmforge.tmux.server import Tmux, project_socket

    return sum(ring(tty) for tty in Tmux(project_socket(root)).client_ttys())


def ring(tty: str) -> bool:
    """Write the bell character to terminal `tty`; False if it cannot be written."""
    try:
        fd = os.open(tty, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.write(fd, b"\a") == 1
    except OSError:
        return False
    finally:
        os.close(fd)


def _note(data: str) -> Mapping[str, object]:
    try:
        note = json.loads(data)
    except ValueError:
        note = None
    if not isinstance(note, dict):
        raise SwarmforgeError("Expected a notification as a JSON object on stdin.")
    return note
