"""Planned-run workers on other hosts: `swarmforge run --workers` and `swarmforge worker`,
against a real nats-server (tests/natsserver.py), real git repositories and real processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from swarmforge.net.transport import Transport
from swarmforge.run.journal.events import Event, TaskState
from swarmforge.run.journal.file import EVENTS, read_events
from swarmforge.run.orchestrator import runs_dir
from swarmforge.run.remote.messages import TaskResult
from swarmforge.run.remote.taskqueue import TaskQueue
from swarmforge.run.spec.runspec import RunSpec, canonical_json, run_id
from tests.natsserver import NatsServer, free_port, nats_server, running_server
from tests.support import GIT_ENV, SWARMFORGE, VENV_BIN, git, make_template, retry_until

__all__ = ["nats_server"]  # the fixture, used by name

ACK_WAIT = "3"  # seconds: a killed worker's task goes to another soon


def cli(*args: str, cwd: Path, extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `swarmforge ARGS` in `cwd` as a user's shell would (git identity included)."""
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", **GIT_ENV, **(extra or {})}
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    return subprocess.Popen(
        [SWARMFORGE, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def journal_events(root: Path, rid: str) -> list[Event]:
    """The events that run `rid` of the project at `root` journaled."""
    return read_events(str(Path(runs_dir(str(root))) / rid / EVENTS))[0]


def finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


class Setup:
    """A project whose [transport] names the test's server and a bare hub repository."""

    def __init__(self, tmp: Path, url: str) -> None:
        self.tmp = tmp
        self.url = url
        self.hub = tmp / "hub.git"
        git(tmp, "init", "-q", "--bare", str(self.hub))
        self.root = make_template(tmp / "project")
        settings = self.root / "swarmforge" / "swarmforge.toml"
        settings.parent.mkdir()
        settings.write_text(f'[transport]\nurl = "{url}"\nhub = "{self.hub}"\n')
        self.log = tmp / "ran.log"  # outside every checkout: what the tasks did, in order
        self.workers: list[subprocess.Popen[str]] = []

    def spec(self, tasks: list[dict[str, object]], name: str = "spec.json") -> str:
        data = {"goal": "workers", "maxConcurrency": 4, "tasks": tasks}
        (self.tmp / name).write_text(json.dumps(data))
        return run_id(RunSpec.model_validate(data))

    def worker(self, name: str, *labels: str) -> subprocess.Popen[str]:
        args = ["worker", "--nats", self.url, "--hub", str(self.hub), "--json"]
        args += ["--dir", str(self.tmp / name), "--name", name]
        for label in labels:
            args += ["--label", label]
        started = cli(*args, cwd=self.tmp)
        self.workers.append(started)
        return started

    def run(self, *extra: str, spec: str = "spec.json") -> subprocess.Popen[str]:
        args = ["run", str(self.tmp / spec), "--workers", "--ack-wait", ACK_WAIT, *extra]
        return cli(*args, cwd=self.root)

    def events(self, rid: str) -> list[Event]:
        return journal_events(self.root, rid)

    def states(self, rid: str, task: str) -> list[tuple[str, str | None]]:
        return [
            (e.status, e.reason)
            for e in self.events(rid)
            if isinstance(e, TaskState) and e.id == task
        ]

    def report(self, rid: str, task: str) -> str:
        reports = Path(runs_dir(str(self.root))) / rid / "reports"
        return "".join(p.read_text() for p in reports.glob(f"{task}.*.md"))

    def ran(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def stop_workers(self) -> list[list[dict[str, object]]]:
        """SIGTERM every worker still running; each one's JSON lines."""
        said = []
        for process in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            out, _ = process.communicate(timeout=30)
            said.append([json.loads(line) for line in out.splitlines() if line.startswith("{")])
        return said


def terminal(states: list[tuple[str, str | None]]) -> list[str]:
    return [status for status, _ in states if status in ("done", "failed")]


def append(log: Path, word: str) -> list[str]:
    return ["sh", "-c", f'echo {word} >> "{log}"']


@pytest.fixture
def setup(tmp_path: Path, nats_server: NatsServer) -> Iterator[Setup]:
    made = Setup(tmp_path, nats_server.url)
    yield made
    for process in made.workers:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_run_over_two_workers_does_every_task_once(setup: Setup) -> None:
    commit = "echo b > b.txt && git add b.txt && git commit -qm 'task b'"
    rid = setup.spec(
        [
            {"id": "a", "command": append(setup.log, "a")},
            {
                "id": "b",
                "command": ["sh", "-c", f'{commit} && echo b >> "{setup.log}"'],
                "isolate": True,
                "dependsOn": ["a"],
            },
            {"id": "g", "command": append(setup.log, "g"), "labels": ["gpu"]},
            {"id": "d", "command": append(setup.log, "d"), "dependsOn": ["b"]},
        ]
    )
    setup.worker("plain")
    setup.worker("gpu-box", "gpu")
    code, out, err = finish(setup.run("--json"))
    assert code == 0, err
    assert json.loads(out)["counts"] == {"done": 4}
    assert sorted(setup.ran()) == ["a", "b", "d", "g"]
    order = setup.ran()
    assert order.index("a") < order.index("b") < order.index("d")
    for task in "abdg":
        states = setup.states(rid, task)
        assert terminal(states) == ["done"]
        assert ("running", "attempt:1") in states
    assert '"worker": "gpu-box"' in setup.report(rid, "g")  # only it holds the label
    branch = f"swarm/{rid}/b"
    assert git(setup.hub, "log", "-1", "--format=%s", branch) == "task b"
    base = git(setup.root, "rev-parse", "HEAD")
    assert git(setup.hub, "rev-parse", f"refs/swarmforge/runs/{rid}/base") == base
    assert f'"branch": "{branch}"' in setup.report(rid, "b")
    handled = [line for said in setup.stop_workers() for line in said if line["event"] == "task"]
    assert sorted(str(h["task_id"]) for h in handled) == ["a", "b", "d", "g"]
    # The user's repository got no remote and no branch of the run.
    assert git(setup.root, "remote") == ""
    assert branch not in git(setup.root, "branch", "--list", "swarm/*")


def sleeping_command(worker: int) -> list[psutil.Process]:
    """The processes of the task a worker runs, once its command has reached `sleep`."""
    found: list[psutil.Process] = []

    def asleep() -> bool:
        found[:] = psutil.Process(worker).children(recursive=True)
        return any(name(p) == "sleep" for p in found)

    retry_until(asleep, timeout=30)
    return found


def name(process: psutil.Process) -> str:
    try:
        return process.name()
    except psutil.NoSuchProcess:
        return ""


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_one_worker_with_jobs_runs_tasks_side_by_side(setup: Setup, tmp_path: Path) -> None:
    meet = tmp_path / "meet"
    meet.mkdir()
    # Each task waits until all three are running: one job at a time would never end.
    wait_all = (
        f'touch "{meet}/$0"; n=0; '
        f'until [ "$(ls "{meet}" | wc -l)" -ge 3 ]; do n=$((n+1)); '
        '[ "$n" -lt 600 ] || exit 9; sleep 0.05; done'
    )
    commit = 'echo "$0" > "$0.txt" && git add "$0.txt" && git commit -qm "task $0"'
    rid = setup.spec(
        [
            {"id": "p", "command": ["sh", "-c", f"{wait_all} && {commit}", "p"], "isolate": True},
            {"id": "q", "command": ["sh", "-c", f"{wait_all} && {commit}", "q"], "isolate": True},
            {"id": "r", "command": ["sh", "-c", wait_all, "r"]},
        ]
    )
    args = ["worker", "--nats", setup.url, "--hub", str(setup.hub), "--json", "--jobs", "3"]
    setup.workers.append(cli(*args, "--dir", str(tmp_path / "w"), "--name", "w", cwd=tmp_path))
    code, _, err = finish(setup.run())
    assert code == 0, err
    for task in ("p", "q", "r"):
        assert terminal(setup.states(rid, task)) == ["done"]
    jobs = {re.findall(r'"worker": "(w/\d)"', setup.report(rid, task))[0] for task in "pqr"}
    assert jobs == {"w/1", "w/2", "w/3"}
    for task in ("p", "q"):
        branch = f"swarm/{rid}/{task}"
        assert git(setup.hub, "log", "-1", "--format=%s", branch) == f"task {task}"
    [said] = setup.stop_workers()
    assert sorted(e["task_id"] for e in said if e["event"] == "task") == ["p", "q", "r"]


def test_jobs_are_refused_with_once(setup: Setup) -> None:
    args = ["worker", "--nats", setup.url, "--hub", str(setup.hub), "--jobs", "2", "--once"]
    code, _, err = finish(cli(*args, cwd=setup.tmp))
    assert code == 1 and "leave out --jobs" in err and "Traceback" not in err


def test_a_task_of_a_killed_worker_runs_again_once(setup: Setup) -> None:
    script = f'echo x >> "{setup.log}"; [ "$(wc -l < "{setup.log}")" -ge 2 ] || sleep 120'
    rid = setup.spec([{"id": "t", "command": ["sh", "-c", script]}])
    doomed = setup.worker("doomed")
    run = setup.run()
    retry_until(lambda: setup.ran() == ["x"], timeout=60)
    children = sleeping_command(doomed.pid)
    doomed.kill()
    doomed.wait()
    for child in children:  # the command's own session outlives its worker
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    setup.worker("heir")
    code, _, err = finish(run)
    assert code == 0, err
    assert setup.ran() == ["x", "x"]
    assert terminal(setup.states(rid, "t")) == ["done"]
    assert '"worker": "heir"' in setup.report(rid, "t")


def test_a_late_duplicate_result_is_ignored(setup: Setup, tmp_path: Path) -> None:
    gate, hold = tmp_path / "gate", tmp_path / "hold"
    wait_for = "while [ ! -e {0} ]; do sleep 0.05; done"
    rid = setup.spec(
        [
            {"id": "t", "command": ["sh", "-c", wait_for.format(gate)]},
            {"id": "h", "command": ["sh", "-c", wait_for.format(hold)]},
        ]
    )
    setup.worker("one")
    setup.worker("two")
    errors = tmp_path / "run.err"
    with errors.open("w") as err_file:
        env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", **GIT_ENV}
        args = ["run", str(tmp_path / "spec.json"), "--workers", "--ack-wait", ACK_WAIT]
        run = subprocess.Popen(
            [SWARMFORGE, *args],
            cwd=setup.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=err_file,
            text=True,
        )
        retry_until(lambda: ("running", "attempt:1") in setup.states(rid, "t"), timeout=30)
        with Transport(setup.url, _project(setup)) as transport:
            queue = TaskQueue(transport)
            queue.ensure()
            fake = TaskResult(
                runId=rid, taskId="t", attempt=2, exitCode=1, worker="ghost", host="x", cwd="/"
            )
            assert queue.put_result(fake)  # a result for an attempt never given
            retry_until(lambda: "it waits for attempt 1" in errors.read_text(), timeout=30)
            gate.touch()
            retry_until(lambda: terminal(setup.states(rid, "t")) == ["done"], timeout=30)
            late = fake.model_copy(update={"attempt": 1, "exitCode": 3})
            again = queue.kv.put(f"{rid}.t.1", late.model_dump_json().encode())
            transport.call(again, "write a late result of the same attempt")
            retry_until(lambda: "it is not running" in errors.read_text(), timeout=30)
        hold.touch()
        run.communicate(timeout=60)
    assert run.returncode == 0, errors.read_text()
    assert terminal(setup.states(rid, "t")) == ["done"]
    assert '"exitCode": 0' in setup.report(rid, "t")


def _project(setup: Setup) -> str:
    from swarmforge.config.transportsettings import TransportSettings
    from swarmforge.net.subjects import project_id

    return project_id(TransportSettings(url=setup.url, hub=str(setup.hub)))


def test_a_task_no_worker_can_take_waits_and_a_resumed_run_finds_it(setup: Setup) -> None:
    rid = setup.spec(
        [
            {"id": "a", "command": append(setup.log, "a")},
            {"id": "g", "command": append(setup.log, "g"), "labels": ["gpu"]},
        ]
    )
    setup.worker("plain")
    run = setup.run()
    retry_until(lambda: terminal(setup.states(rid, "a")) == ["done"], timeout=30)
    assert ("running", "attempt:1") in setup.states(rid, "g")
    run.send_signal(signal.SIGTERM)
    code, _, err = finish(run)
    assert code == 128 + signal.SIGTERM and "Traceback" not in err
    assert setup.ran() == ["a"] and terminal(setup.states(rid, "g")) == []
    # Resumed: the same attempt, still queued, goes to the first worker with the label.
    setup.worker("gpu-box", "gpu")
    code, _, err = finish(setup.run())
    assert code == 0, err
    assert setup.ran() == ["a", "g"]
    assert terminal(setup.states(rid, "g")) == ["done"]
    assert [r for s, r in setup.states(rid, "g") if s == "running"] == ["attempt:1"]


def test_bad_server_login_or_hub_give_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "locked").mkdir()
    with contextmanager(running_server)(tmp_path / "locked", "sf", "right") as server:
        hub = tmp_path / "hub.git"
        git(tmp_path, "init", "-q", "--bare", str(hub))
        base = ["worker", "--hub", str(hub), "--dir", str(tmp_path / "w"), "--once"]
        cases = [
            (server.url, {"SWARMFORGE_NATS_USER": "sf", "SWARMFORGE_NATS_PASSWORD": "wrong"}),
            (f"nats://127.0.0.1:{free_port()}", {}),
        ]
        said = []
        for url, env in cases:
            code, _, err = finish(cli(*base, "--nats", url, cwd=tmp_path, extra=env), 60)
            assert code == 1 and len(err.strip().splitlines()) == 1, err
            said.append(err)
        assert "refused the login" in said[0]
        assert "connection refused" in said[1]
        good = {"SWARMFORGE_NATS_USER": "sf", "SWARMFORGE_NATS_PASSWORD": "right"}
        args = ["worker", "--nats", server.url, "--hub", str(tmp_path / "nowhere.git")]
        code, _, err = finish(cli(*args, "--dir", str(tmp_path / "w"), cwd=tmp_path, extra=good))
        assert code == 1 and err.startswith("cannot reach the hub"), err
        assert len(err.strip().splitlines()) == 1


def test_workers_need_transport_and_a_reachable_server(tmp_path: Path) -> None:
    root = make_template(tmp_path / "project")
    (tmp_path / "spec.json").write_text(
        json.dumps({"goal": "g", "tasks": [{"id": "a", "command": ["true"]}]})
    )
    code, _, err = finish(cli("run", str(tmp_path / "spec.json"), "--workers", cwd=root))
    assert code == 1 and "swarmforge/swarmforge.toml" in err and "[transport]" in err
    (root / "swarmforge").mkdir()
    (root / "swarmforge" / "swarmforge.toml").write_text(
        f'[transport]\nurl = "nats://127.0.0.1:{free_port()}"\nhub = "{tmp_path}/hub.git"\n'
    )
    code, _, err = finish(cli("run", str(tmp_path / "spec.json"), "--workers", cwd=root))
    assert code == 1 and err.count("\n") == 1 and "cannot connect" in err, err
    rid = run_id(RunSpec.model_validate_json((tmp_path / "spec.json").read_text()))
    assert journal_events(root, rid) == []


def test_a_local_run_without_workers_is_unchanged(tmp_path: Path) -> None:
    root = make_template(tmp_path / "project")
    (root / "swarmforge").mkdir()
    # A [transport] whose server does not exist: a local run never goes near it.
    (root / "swarmforge" / "swarmforge.toml").write_text(
        f'[transport]\nurl = "nats://127.0.0.1:{free_port()}"\nhub = "{tmp_path}/hub.git"\n'
    )
    log = tmp_path / "ran.log"
    tasks = [
        {"id": "a", "command": append(log, "a")},
        {"id": "g", "command": append(log, "g"), "labels": ["gpu"], "dependsOn": ["a"]},
    ]
    (tmp_path / "spec.json").write_text(json.dumps({"goal": "g", "tasks": tasks}))
    code, _, err = finish(cli("run", str(tmp_path / "spec.json"), cwd=root))
    assert code == 0, err
    assert log.read_text().split() == ["a", "g"]
    rid = run_id(RunSpec.model_validate({"goal": "g", "tasks": tasks}))
    events = journal_events(root, rid)
    running = [e for e in events if isinstance(e, TaskState) and e.status == "running"]
    assert [e.reason for e in running] == [None, None]


def test_labels_are_one_word_each_and_leave_other_run_ids_alone() -> None:
    plain = {"goal": "g", "tasks": [{"id": "a", "command": ["true"]}]}
    assert "labels" not in canonical_json(RunSpec.model_validate(plain))
    assert run_id(RunSpec.model_validate(plain)) == "run-" + _old_hash(plain)
    labelled = RunSpec.model_validate(
        {"goal": "g", "tasks": [{"id": "a", "command": ["true"], "labels": ["x86", "gpu"]}]}
    )
    assert labelled.tasks[0].labels == ["gpu", "x86"]
    for bad in (["two words"], ["a_b"], ["gpu", "gpu"], ["-x"]):
        with pytest.raises(ValueError, match="label"):
            RunSpec.model_validate(
                {"goal": "g", "tasks": [{"id": "a", "command": ["true"], "labels": bad}]}
            )
    with pytest.raises(ValueError, match="only a plain command"):
        RunSpec.model_validate({"goal": "g", "tasks": [{"id": "a", "role": "r", "labels": ["x"]}]})


def _old_hash(data: dict[str, object]) -> str:
    """The run id the spec had before tasks could carry labels."""
    import hashlib

    tasks = [
        {
            "background": False,
            "command": ["true"],
            "dependsOn": [],
            "fanOut": None,
            "id": "a",
            "irreversible": False,
            "isolate": False,
            "metadata": {},
            "role": None,
            "subtasks": [],
            "tier": "T1",
        }
    ]
    spec = {"goal": data["goal"], "maxConcurrency": 4, "ramp": None, "tasks": tasks}
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_a_second_stop_hands_the_task_back_at_once(setup: Setup, tmp_path: Path) -> None:
    script = f'echo x >> "{setup.log}"; [ "$(wc -l < "{setup.log}")" -ge 2 ] || sleep 120'
    rid = setup.spec([{"id": "t", "command": ["sh", "-c", script]}])
    said = tmp_path / "first.err"
    args = ["worker", "--nats", setup.url, "--hub", str(setup.hub), "--dir", str(tmp_path / "w1")]
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", **GIT_ENV}
    with said.open("w") as err_file:
        first = subprocess.Popen(
            [SWARMFORGE, *args, "--name", "first"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            text=True,
        )
    setup.workers.append(first)
    # An ack wait far beyond the test's patience: only a hand-back lets another take it.
    run = cli("run", str(tmp_path / "spec.json"), "--workers", "--ack-wait", "600", cwd=setup.root)
    retry_until(lambda: setup.ran() == ["x"], timeout=60)
    command = sleeping_command(first.pid)
    first.send_signal(signal.SIGTERM)
    retry_until(lambda: "stopping once" in said.read_text(), timeout=30)
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=30) == 0
    assert "Traceback" not in said.read_text()
    assert not any(alive(p) for p in command)
    setup.worker("second")
    code, _, err = finish(run, 60)
    assert code == 0, err
    assert setup.ran() == ["x", "x"]
    assert terminal(setup.states(rid, "t")) == ["done"]
    assert '"worker": "second"' in setup.report(rid, "t")
