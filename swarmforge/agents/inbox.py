"""An agent's own inbox: a message handed to the agent as its next turn, never typed.

claude (2.1.224 and later) listens on a Unix socket for messages from other sessions
(cross-session messaging) and takes each as a user message: as a new turn when it is
idle, between two tool calls when it works, and only once a question it shows a person
(an approval dialog) is answered. Nothing sent there is read as an answer to a dialog,
unlike keystrokes. swarmforge starts each interactive claude with its socket at a path
it knows (`--messaging-socket-path`, in the role's temporary directory), and the daemon
wakes the role through it; typing into the pane stays the way for every other agent,
and for a claude whose socket is not there.

The protocol: one connection, one JSON line
`{"type": "user", "message": {"role": "user", "content": "<text>"}}`. claude drops a
message whose text it has already taken in the session, so each wake-up says when the
mail came.
"""

from __future__ import annotations

import json
import socket

SEND_TIMEOUT = 2.0  # seconds to connect and hand over one line


def send(path: str, text: str) -> None:
    """Hand `text` to the agent listening at `path` as its next user message; OSError if
    nothing listens there (no socket, or one left by an agent that ended)."""
    line = {"type": "user", "message": {"role": "user", "content": text}}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(SEND_TIMEOUT)
        conn.connect(path)
        conn.sendall(json.dumps(line).encode() + b"\n")
