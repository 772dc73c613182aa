"""Notifications: the user's command, run in the background on chosen events, bursts coalesced."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from swarmforge.config.alertsettings import NotifySettings
from swarmforge.daemon.alerts.command import Alerts
from swarmforge.daemon.alerts.readymade import bell, ring
from swarmforge.daemon.alerts.triggers import payload, trigger_of
from swarmforge.handoff.mailbox import Box
from swarmforge.proc import liveness
from tests.support import RECORDER, Project, recorded, retry_until
from tests.support import run_cli as sf

# Appends what it reads on stdin, as one line, to the file named by its argument.


def test_triggers_name_states_and_kinds() -> None:
    chosen = ["waiting", "exited", "handoff-failed", "run-finished"]
    assert trigger_of({"kind": "agent-state", "state": "waiting"}, chosen) == "waiting"
    assert trigger_of({"kind": "agent-state", "state": "working"}, chosen) is None
    assert trigger_of({"kind": "agent-exited", "exit_code": 3}, chosen) == "exited"
    assert trigger_of({"kind": "handoff-failed"}, chosen) == "handoff-failed"
    assert trigger_of({"kind": "handoff-delivered"}, chosen) is None
    assert trigger_of({"kind": "agent-state", "state": "stalled"}, chosen) is None


def test_a_crossed_budget_notifies_by_default() -> None:
    crossed = {
        "kind": "budget-crossed",
        "scope": "swarm",
        "tokens": 10,
        "budget": 10,
        "run_id": "r",
    }
    assert trigger_of(crossed, NotifySettings().on) == "budget-crossed"
    assert trigger_of(crossed, ["waiting", "handoff-failed"]) is None


def test_each_event_notifies_once_and_a_burst_once(tmp_path: Path) -> None:
    out, go = tmp_path / "notes", tmp_path / "go"
    problems: list[str] = []
    # The command waits for `go`, which is made only once both feeds have returned.
    waits = f'while [ ! -e {go} ]; do sleep 0.05; done; exec "$@"'
    alerts = Alerts(
        ["sh", "-c", waits, "sh", sys.executable, "-c", RECORDER, str(out)],
        ["handoff-failed", "exited"],
        cwd=str(tmp_path),
        log=problems.append,
        burst=0.2,
    )
    failed = [{"ts": f"t{n}", "kind": "handoff-failed", "name": f"{n}.handoff"} for n in range(5)]

    def feed() -> None:
        alerts.feed([*failed, {"ts": "t9", "kind": "handoff-delivered"}])
        alerts.feed([{"ts": "t10", "kind": "agent-exited", "role": "qa", "exit_code": 3}])

    feeding = threading.Thread(target=feed, daemon=True)
    feeding.start()
    feeding.join(timeout=30)
    assert not feeding.is_alive(), "feeding waited for a command"
    go.touch()
    retry_until(lambda: len(recorded(out)) == 2)
    alerts.wait()
    notes = sorted(recorded(out), key=lambda n: str(n["trigger"]))
    assert notes == [
        {"trigger": "exited", "ts": "t10", "kind": "agent-exited", "role": "qa", "exit_code": 3},
        payload("handoff-failed", failed),
    ]
    assert notes[1]["count"] == 5 and problems == []


def test_each_way_a_command_fails_is_logged_as_it_happened(tmp_path: Path) -> None:
    left = tmp_path / "left"
    (tmp_path / "plain.txt").write_text("not a program\n")
    commands = [
        ["sh", "-c", "echo no display >&2; exit 4"],
        ["sh", "-c", "kill -TERM $$"],
        # Hangs, with a process of its own: ended with it.
        ["sh", "-c", f"sleep 60 & echo $! > {left}; wait"],
        [str(tmp_path / "missing")],
        [str(tmp_path / "plain.txt")],
    ]
    problems: list[str] = []
    for command in commands:
        alerts = Alerts(
            command, ["run-finished"], cwd=str(tmp_path), log=problems.append, burst=0, timeout=1
        )
        alerts.feed([{"ts": "t", "kind": "run-finished", "run_id": "r1"}])
        alerts.wait()
    assert problems[:3] == [
        "notification for run-finished: sh exited 4: no display",
        "notification for run-finished: sh was ended by signal 15 (SIGTERM)",
        "notification for run-finished: sh took over 1 s and was ended",
    ]
    could_not = "notification for run-finished could not start"
    assert problems[3].startswith(f"{could_not} {tmp_path}/missing: [Errno 2]")
    assert problems[4].startswith(f"{could_not} {tmp_path}/plain.txt: [Errno 13]")
    assert len(problems) == 5
    sleeper = int(left.read_text())
    retry_until(lambda: not liveness.is_alive(sleeper))


def test_the_daemon_notifies_a_failed_delivery_with_the_event(project: Project) -> None:
    out = project.root / "notes"
    settings = project.root / "swarmforge" / "swarmforge.toml"
    settings.parent.mkdir(exist_ok=True)
    command = json.dumps([sys.executable, "-c", RECORDER, str(out)])
    settings.write_text(f'[notify]\ncommand = {command}\non = ["handoff-failed"]\n')
    assert sf("daemon", "start", "--notify", "none", cwd=project.root).returncode == 0
    try:
        outbox = project.box("coder", Box.OUTBOX)
        outbox.mkdir(parents=True, exist_ok=True)
        (outbox / "not-a-gate-name.handoff").write_text("from: coder\n\nx\n")
        retry_until(lambda: len(recorded(out)) == 1, timeout=30)
    finally:
        assert sf("daemon", "stop", cwd=project.root).returncode == 0
    (note,) = recorded(out)
    assert note["trigger"] == "handoff-failed" and note["kind"] == "handoff-failed"
    assert note["name"] == "not-a-gate-name.handoff" and "file name" in str(note["reason"])


def test_notify_send_shows_the_event_and_a_burst_on_the_desktop(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    said = tmp_path / "said"
    fake = tools / "notify-send"
    fake.write_text(f"#!/bin/sh\nprintf '%s|' \"$@\" >> {said}\necho >> {said}\n")
    fake.chmod(0o755)
    event = {"ts": "2026-12-01T10:00:00.000000Z", "kind": "handoff-failed", "name": "x.handoff"}
    for note in (payload("handoff-failed", [event]), payload("handoff-failed", [event, event])):
        r = sf("notify-send", cwd=tmp_path, path_extra=f"{tools}:", stdin=json.dumps(note))
        assert (r.returncode, r.stderr) == (0, "")
    single, burst = said.read_text().splitlines()
    assert single.startswith("--app-name=swarmforge|swarmforge: handoff-failed|")
    assert "x.handoff" in single
    assert burst.startswith("--app-name=swarmforge|swarmforge: 2 x handoff-failed|")
    r = sf("notify-send", cwd=tmp_path, path_extra=f"{tools}:", stdin="not json")
    assert (r.returncode, r.stderr) == (1, "Expected a notification as a JSON object on stdin.\n")


def test_the_bell_rings_a_terminal_and_nothing_without_one(tmp_path: Path) -> None:
    main, follower = os.openpty()
    try:
        assert ring(os.ttyname(follower))
        assert os.read(main, 16) == b"\a"
    finally:
        os.close(main)
        os.close(follower)
    assert not ring(str(tmp_path / "no-such-tty"))
    assert bell(str(tmp_path)) == 0  # no tmux server for this project: nobody to ring


def test_a_ready_made_command_runs_with_this_swarmforge(tmp_path: Path) -> None:
    alerts = Alerts(["swarmforge", "bell"], ["exited"], cwd=str(tmp_path), log=print)
    assert alerts.command == [sys.executable, "-m", "swarmforge", "bell"]
