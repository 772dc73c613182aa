"""A swarm's own tmux server on the project's private socket: its sessions, panes and end.

Every call goes to `tmux -L SOCKET`, so the user's own server and sessions are never
touched. Arguments reach tmux as an argv list, never through a shell.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable

from swarmforge.errors import SwarmforgeError
from swarmforge.proc import liveness, spawn
from swarmforge.projectroot import project_digest
from swarmforge.tmux.spec import SessionSpec, argument, check, command_argv
from swarmforge.waiting import wait_until

WIDTH, HEIGHT = 220, 50


KILL_TIMEOUT = 5.0


# The user option naming what a pane of a tiled session shows (`start_tiled`).
PANE_LABEL = "@swarmforge_label"


# What a client says that reached a server on its way out; the command did not run.
LOST_SERVER = b"server exited unexpectedly"


LOST_SERVER_TRIES = 5


def project_socket(root: str) -> str:
    """The name of the project's private tmux socket (`tmux -L NAME`)."""
    return f"swarmforge-{project_digest(root)}"


class Tmux:
    """A tmux server on a private socket (`tmux -L socket`), optionally with its own config."""

    def __init__(self, socket: str, config: str | None = None) -> None:
        self.socket = socket
        self.config = config

    def _run(self, *commands: list[str], input: bytes = b"") -> spawn.Completed:
        argv = ["tmux", "-L", self.socket]
        if self.config is not None:
            # Read only when this call starts the server; ignored by a running one.
            argv += ["-f", self.config]
        for i, command in enumerate(commands):
            if i:
                argv.append(";")
            argv += [argument(a) for a in command]
        return spawn.run(argv, input=input)

    def _error(self, what: str, result: spawn.Completed) -> SwarmforgeError:
        detail = result.stderr.decode(errors="replace").strip() or f"exit {result.returncode}"
        hint = ""
        if "command too long" in detail:
            hint = "tmux takes about 16 KB of arguments: shorten the command or its environment."
        return SwarmforgeError(f"tmux could not {what} (socket {self.socket}): {detail}", hint=hint)

    def server_running(self) -> bool:
        """True if a server answers on the socket."""
        return self._run(["list-sessions"]).ok

    def base_indexes(self) -> tuple[int, int]:
        """The effective global `base-index` and `pane-base-index`."""
        # start-server reads the config files when no server runs (and, with tmux's
        # default exit-empty, the server leaves again as this client does).
        result = self._run(
            ["start-server"],
            ["show-options", "-gv", "base-index"],
            ["show-options", "-gwv", "pane-base-index"],
        )
        values = result.stdout.decode(errors="replace").split()
        if not result.ok or len(values) != 2 or not all(v.isdigit() for v in values):
            raise self._error("read base-index and pane-base-index", result)
        return int(values[0]), int(values[1])

    def has_session(self, name: str) -> bool:
        """True if a session called exactly `name` exists."""
        return self._run(["has-session", "-t", f"={name}"]).ok

    def _create(self, spec: SessionSpec, width: int, height: int) -> bool:
        # -c is expanded as a format: '##' is a literal '#'.
        create = ["new-session", "-d", "-s", spec.name, "-c", spec.cwd.replace("#", "##")]
        create += ["-x", str(width), "-y", str(height)]
        for key, value in spec.env.items():
            create += ["-e", f"{key}={value}"]
        create += ["--", *command_argv(spec.argv)]
        # Chained in one call, so a user's global remain-on-exit never keeps a dead
        # agent's pane (and its session) around, even for an instant.
        keep = ["set-option", "-w", "-t", f"={spec.name}:", "remain-on-exit", "off"]
        chain = [create, keep]
        if spec.log is not None:
            # In the same call, before the server reads the pane's first output.
            chain.append(["pipe-pane", "-t", f"={spec.name}:", f"cat >> {shlex.quote(spec.log)}"])
        for _ in range(LOST_SERVER_TRIES):
            result = self._run(*chain)
            if result.ok:
                return True
            if self.has_session(spec.name):
                return False  # another caller created it meanwhile
            if LOST_SERVER not in result.stderr:
                break
            # The client reached a server that was just leaving (one a moment ago
            # started only to read options, which exits with its last client): the
            # session was not made, and the next call starts a server of its own.
            time.sleep(0.05)
        raise self._error(f"start session '{spec.name}'", result)

    def pane_pid(self, name: str) -> int | None:
        """The pid of the process in the session's first pane, or None without a session."""
        if not self.has_session(name):
            return None
        base, pane_base = self.base_indexes()
        target = f"={name}:{base}.{pane_base}"
        result = self._run(["display-message", "-p", "-t", target, "#{pane_pid}"])
        text = result.stdout.decode(errors="replace").strip()
        return int(text) if result.ok and text.isdigit() else None

    def capture(self, target: str, lines: int = 60) -> list[str]:
        """The last `lines` lines a pane (`target`: a session `=name:` or a pane id) shows."""
        result = self._run(["capture-pane", "-p", "-J", "-S", f"-{lines}", "-t", target])
        if not result.ok:
            raise self._error(f"read pane {target}", result)
        return result.stdout.decode(errors="replace").splitlines()

    def screen(self, target: str) -> bytes:
        """What pane `target` shows and where its cursor is: to compare, telling a change."""
        # The cursor counts: a plain terminal echoing Enter only moves it.
        shown = self._run(["capture-pane", "-p", "-t", target])
        cursor = self._run(["display-message", "-p", "-t", target, "#{cursor_x},#{cursor_y}"])
        return shown.stdout + b"\0" + cursor.stdout

    def paste(self, target: str, text: str, buffer: str) -> None:
        """Paste `text` into pane `target` in one piece, through buffer `buffer` (then deleted)."""
        loaded = self._run(["load-buffer", "-b", buffer, "-"], input=text.encode())
        if not loaded.ok:
            raise self._error(f"load buffer {buffer}", loaded)
        # -p brackets the text only for programs that asked for bracketed paste.
        pasted = self._run(["paste-buffer", "-p", "-d", "-b", buffer, "-t", target])
        if not pasted.ok:
            raise self._error(f"paste into {target}", pasted)

    def press(self, target: str, key: str) -> None:
        """Press `key` (a tmux key name, such as Enter) in pane `target`."""
        result = self._run(["send-keys", "-t", target, key])
        if not result.ok:
            raise self._error(f"press {key} in {target}", result)

    def client_ttys(self) -> list[str]:
        """The terminals of the clients attached to the server, sorted; none without a server."""
        result = self._run(["list-clients", "-F", "#{client_tty}"])
        return sorted(set(result.stdout.decode(errors="replace").split())) if result.ok else []

    def kill_server(self, timeout: float = KILL_TIMEOUT) -> None:
        """End the server and all its sessions, returning once it is gone."""
        found = self._run(["display-message", "-p", "#{pid}"])
        text = found.stdout.decode(errors="replace").strip()
        if not found.ok or not text.isdigit():
            return  # no server runs
        self._run(["kill-server"])
        # kill-server returns before the server exits, and a client connecting to the
        # dying server fails: wait, so that a following start finds a clean socket.
        if not wait_until(lambda: not liveness.is_alive(int(text)), timeout, 0.01):
            raise SwarmforgeError(f"The tmux server {text} (socket {self.socket}) did not exit.")

    def start_all(
        self,
        sessions: list[SessionSpec],
        stagger: float,
        sleep: Callable[[float], None] = time.sleep,
        gate: Callable[[SessionSpec], None] | None = None,
    ) -> list[str]:
        """Create the missing sessions in order, `stagger` seconds apart; the names created.

        `gate`, if given, is called right before each missing session is created, and may
        wait: `up` paces the agents' starts through it (ramp.py)."""
        for spec in sessions:
            check(spec.name, spec.argv, spec.env)  # all before any: nothing half-started
        created: list[str] = []
        for spec in sessions:
            if self.has_session(spec.name):
                continue
            if created:
                # Agents starting at the same instant contend for logins and rate limits.
                sleep(stagger)
            if gate is not None:
                gate(spec)
            if self._create(spec, WIDTH, HEIGHT):
                created.append(spec.name)
        return created

    def attach_argv(self, name: str, tmux: str = "tmux") -> list[str]:
        """The command that attaches a terminal to session `name` (`tmux`: the binary to name)."""
        return [tmux, "-L", self.socket, "attach-session", "-t", f"={name}"]

    def pane_labels(self, name: str) -> list[str] | None:
        """The labels `start_tiled` gave the panes of session `name`, or None without it."""
        result = self._run(["list-panes", "-s", "-t", f"={name}", "-F", f"#{{{PANE_LABEL}}}"])
        return result.stdout.decode(errors="replace").splitlines() if result.ok else None

    def start_tiled(self, name: str, panes: list[tuple[str, list[str]]]) -> bool:
        """Create session `name` with one labelled pane per (label, argv), tiled; False if it
        existed. It ends when its last client leaves (detaches or goes away)."""
        if not panes:
            raise SwarmforgeError(f"No panes given for tmux session '{name}'.")
        for label, argv in panes:
            check(name, argv, {})
            if not label or "#" in label:
                raise SwarmforgeError(f"Invalid pane label {label!r} for '{name}'.")
        target = f"={name}:"
        (label, argv), rest = panes[0], panes[1:]
        size = ["-x", str(WIDTH), "-y", str(HEIGHT)]
        chain = [
            ["new-session", "-d", "-s", name, *size, "--", *command_argv(argv)],
            # Before the other panes start: a pane whose client ends leaves no dead pane.
            ["set-option", "-w", "-t", target, "remain-on-exit", "off"],
            ["set-option", "-p", "-t", target, PANE_LABEL, label],
        ]
        for label, argv in rest:
            # The new pane becomes the active one, which `target` names next; tiling after
            # every split keeps room for the next one.
            chain += [
                ["split-window", "-t", target, "--", *command_argv(argv)],
                ["set-option", "-p", "-t", target, PANE_LABEL, label],
                ["select-layout", "-t", target, "tiled"],
            ]
        # tmux ends a session with destroy-unattached when its last client leaves, and
        # also at once when the client that made it with -d exits: set once one attached.
        gone = f"set-option -t {target} destroy-unattached on"
        chain += [
            ["select-layout", "-t", target, "tiled"],
            ["set-option", "-w", "-t", target, "pane-border-status", "top"],
            ["set-option", "-w", "-t", target, "pane-border-format", f" #{{{PANE_LABEL}}} "],
            ["set-hook", "-t", target, "client-attached", gone],
        ]
        result = self._run(*chain)
        if result.ok:
            return True
        if self.has_session(name):
            return False  # another caller created it meanwhile
        raise self._error(f"start session '{name}'", result)
