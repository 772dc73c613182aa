"""The tmux backend: each interactive role in its own session on the project's private server.

The only module that runs tmux or builds a tmux command line. Every call goes to
`tmux -L SOCKET`, so the user's own server and sessions are never touched; the one
command line for the user's own tmux (`new_window_argv`) is run by `attach`, on the
person's request. Arguments reach tmux as an argv list, never through a shell; the
few places where tmux itself would reinterpret an argument are escaped here.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from swarmforge import proc
from swarmforge.errors import SwarmforgeError
from swarmforge.roletable import SESSION_UNSAFE_CHARS
from swarmforge.waiting import wait_until

WIDTH, HEIGHT = 220, 50
KILL_TIMEOUT = 5.0
# The user option naming what a pane of a tiled session shows (`start_tiled`).
PANE_LABEL = "@swarmforge_label"
# tmux rewrites '.' and ':' in session names and expands '#' formats in them, so a
# name with one of these would not be found again under the name it was given.
_NAME_FORBIDDEN = SESSION_UNSAFE_CHARS
# What a client says that reached a server on its way out; the command did not run.
LOST_SERVER = b"server exited unexpectedly"
LOST_SERVER_TRIES = 5


def project_socket(root: str) -> str:
    """The name of the project's private tmux socket (`tmux -L NAME`)."""
    digest = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:12]
    return f"swarmforge-{digest}"


@dataclass(frozen=True)
class SessionSpec:
    """One session to start: its name, directory, command and environment."""

    name: str
    cwd: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    log: str | None = None  # a file that keeps everything the pane shows


def _arg(value: str) -> str:
    """`value` as one tmux command argument that arrives unchanged."""
    # tmux ends a command at an argument ending in ';' and reads a final '\;' as ';'.
    return value[:-1] + "\\;" if value.endswith(";") else value


def _command(argv: list[str]) -> list[str]:
    """`argv` in a form tmux executes directly."""
    # tmux hands a lone argument to the user's shell, which would split and expand it;
    # POSIX sh given the name as "$0" runs it verbatim, and exec keeps the pane's pid.
    return ["/bin/sh", "-c", 'exec "$0"', argv[0]] if len(argv) == 1 else list(argv)


def _check(name: str, argv: list[str], env: dict[str, str]) -> None:
    """Refuse what tmux would silently alter or misread."""
    if not name or any(c in _NAME_FORBIDDEN for c in name):
        raise SwarmforgeError(
            f"Invalid tmux session name {name!r}.",
            hint=f"Use a non-empty name without any of {_NAME_FORBIDDEN!r}.",
        )
    if not argv:
        raise SwarmforgeError(f"No command given for tmux session '{name}'.")
    for key in env:
        if not key or "=" in key:
            raise SwarmforgeError(f"Invalid environment variable name {key!r} for '{name}'.")


class Tmux:
    """A tmux server on a private socket (`tmux -L socket`), optionally with its own config."""

    def __init__(self, socket: str, config: str | None = None) -> None:
        self.socket = socket
        self.config = config

    def _run(self, *commands: list[str], input: bytes = b"") -> proc.Completed:
        argv = ["tmux", "-L", self.socket]
        if self.config is not None:
            # Read only when this call starts the server; ignored by a running one.
            argv += ["-f", self.config]
        for i, command in enumerate(commands):
            if i:
                argv.append(";")
            argv += [_arg(a) for a in command]
        return proc.run(argv, input=input)

    def _error(self, what: str, result: proc.Completed) -> SwarmforgeError:
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
        create += ["--", *_command(spec.argv)]
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
        if not wait_until(lambda: not proc.is_alive(int(text)), timeout, 0.01):
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
            _check(spec.name, spec.argv, spec.env)  # all before any: nothing half-started
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
            _check(name, argv, {})
            if not label or "#" in label:
                raise SwarmforgeError(f"Invalid pane label {label!r} for '{name}'.")
        target = f"={name}:"
        (label, argv), rest = panes[0], panes[1:]
        size = ["-x", str(WIDTH), "-y", str(HEIGHT)]
        chain = [
            ["new-session", "-d", "-s", name, *size, "--", *_command(argv)],
            # Before the other panes start: a pane whose client ends leaves no dead pane.
            ["set-option", "-w", "-t", target, "remain-on-exit", "off"],
            ["set-option", "-p", "-t", target, PANE_LABEL, label],
        ]
        for label, argv in rest:
            # The new pane becomes the active one, which `target` names next; tiling after
            # every split keeps room for the next one.
            chain += [
                ["split-window", "-t", target, "--", *_command(argv)],
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


def new_window_argv(name: str, argv: list[str], tmux: str = "tmux") -> list[str]:
    """The command that runs `argv` in a new window `name` of the user's own tmux (the server
    TMUX names, never a swarm's); -n also keeps tmux from renaming the window."""
    return [tmux, "new-window", "-n", name, "--", *argv]


def sleep_inhibitor_argv(
    *, platform: str = sys.platform, path: str | None = None
) -> list[str] | None:
    """The command that keeps the machine awake until killed, or None if there is none."""
    if proc.which("systemd-inhibit", path):
        return [
            "systemd-inhibit",
            "--what=idle:sleep",
            "--who=swarmforge",
            "--why=a swarm is running",
            "sleep",
            "infinity",
        ]
    if platform == "darwin" and proc.which("caffeinate", path):
        return ["caffeinate", "-i"]
    return None
