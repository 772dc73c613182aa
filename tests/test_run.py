"""Planned runs end to end: dispatch, park, resume after SIGKILL, isolation, leads, roles."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from swarmforge.config import sessionrecord
from swarmforge.errors import SwarmforgeError
from swarmforge.git.isolation import IsolationUnavailable
from swarmforge.run.dispatch import Dispatch
from swarmforge.run.journal.checkpoint import CHECKPOINT
from swarmforge.run.journal.events import Event, TaskState
from swarmforge.run.journal.file import EVENTS, read_events
from swarmforge.run.journal.replay import resume_states
from swarmforge.run.levels import Flight, Level
from swarmforge.run.orchestrator import Orchestrator, runs_dir
from swarmforge.run.preflight import preflight
from swarmforge.run.spec.runspec import RunSpec, run_id
from swarmforge.run.spec.task import SubtaskSpec
from swarmforge.run.spec.toplevel import TaskSpec
from tests.support import SWARMFORGE, VENV_BIN, Project, git, retry_until, run_script
from tests.support import run_cli as sf


def spec(tasks: list[dict[str, object]], **extra: object) -> RunSpec:
    return RunSpec.model_validate({"goal": "test", "maxConcurrency": 4, "tasks": tasks, **extra})


def sh(script: str) -> list[str]:
    return ["sh", "-c", script]


def events(root: Path, rid: str) -> list[Event]:
    return read_events(str(Path(runs_dir(str(root))) / rid / EVENTS))[0]


def test_a_dag_runs_in_dependency_order_and_failures_block_dependents(tmp_path: Path) -> None:
    s = spec(
        [
            {"id": "a", "command": sh("echo a >> order")},
            {"id": "b", "command": sh("echo b >> order"), "dependsOn": ["a"]},
            {"id": "c", "command": ["false"]},
            {"id": "d", "command": ["true"], "dependsOn": ["c"]},
        ]
    )
    result = Orchestrator(str(tmp_path), s).run()
    assert result.counts == {"done": 2, "failed": 1, "blocked": 1}
    assert result.failed == ["c"] and result.ok is False
    assert (tmp_path / "order").read_text() == "a\nb\n"
    reports = Path(runs_dir(str(tmp_path))) / run_id(s) / "reports"
    assert sorted(p.name for p in reports.iterdir()) == [
        "a.complete.md",
        "b.complete.md",
        "c.failed.md",
    ]
    seqs = [e.seq for e in events(tmp_path, run_id(s))]
    assert seqs == list(range(1, len(seqs) + 1))


def test_cli_exit_status_summary_and_json(tmp_path: Path) -> None:
    (tmp_path / "spec.toml").write_text(
        'goal = "g"\n[[tasks]]\nid = "ok"\ncommand = ["true"]\n'
        '[[tasks]]\nid = "bad"\ncommand = ["false"]\n'
    )
    r = sf("run", "spec.toml", cwd=tmp_path)
    assert r.returncode == 1 and "failed: bad" in r.stdout
    r = sf("run", "spec.toml", "--json", cwd=tmp_path)
    assert r.returncode == 1 and json.loads(r.stdout)["counts"] == {"done": 1, "failed": 1}
    listing = json.loads(sf("runs", "list", "--json", cwd=tmp_path).stdout)
    assert len(listing) == 1 and listing[0]["finished"] is True
    tail = sf("tail", listing[0]["runId"][:8], "--json", cwd=tmp_path)
    kinds = [json.loads(line)["kind"] for line in tail.stdout.splitlines()]
    assert kinds[0] == "run-started" and "run-resumed" in kinds
    # A torn last line (a writer killed mid-line): listing reads around it, writes nothing.
    events_file = Path(runs_dir(str(tmp_path))) / listing[0]["runId"] / EVENTS
    with events_file.open("ab") as f:
        f.write(b'{"seq": 99, "ts"')
    torn = events_file.read_bytes()
    again = json.loads(sf("runs", "list", "--json", cwd=tmp_path).stdout)
    assert again == listing and events_file.read_bytes() == torn


@pytest.mark.parametrize(
    ("task", "reason"),
    [
        (
            {"metadata": {"legal": True, "security": True}, "irreversible": True, "tier": "T4"},
            "legal",
        ),
        ({"metadata": {"security": True, "irreversible": True}, "tier": "T4"}, "security"),
        ({"metadata": {"irreversible": True}, "tier": "T4"}, "irreversible"),
        ({"irreversible": True, "tier": "T4"}, "irreversible"),
        ({"tier": "T4"}, "tier-t4"),
    ],
)
def test_parked_tasks_never_run_until_approved(
    tmp_path: Path, task: dict[str, object], reason: str
) -> None:
    s = spec(
        [
            {"id": "risky", "command": sh("touch ran"), **task},
            {"id": "after", "command": ["true"], "dependsOn": ["risky"]},
        ]
    )
    result = Orchestrator(str(tmp_path), s).run()
    assert result.parked == {"risky": reason} and not (tmp_path / "ran").exists()
    rid = run_id(s)
    assert sf("approve", rid, "risky", cwd=tmp_path).returncode == 0
    result = Orchestrator(str(tmp_path), s).run()
    assert result.counts == {"done": 2} and (tmp_path / "ran").exists()


def test_a_rejection_is_final(tmp_path: Path) -> None:
    s = spec([{"id": "risky", "command": sh("touch ran"), "tier": "T4"}])
    Orchestrator(str(tmp_path), s).run()
    assert sf("reject", run_id(s), "risky", "--note", "no", cwd=tmp_path).returncode == 0
    assert Orchestrator(str(tmp_path), s).run().counts == {"failed": 1}
    r = sf("approve", run_id(s), "risky", cwd=tmp_path)
    assert r.returncode == 1 and "reject" in r.stderr
    assert not (tmp_path / "ran").exists()


def test_depth_is_bounded_by_schema_and_at_run_time() -> None:
    with pytest.raises(ValueError, match="subtasks"):
        SubtaskSpec.model_validate({"id": "x", "subtasks": [{"id": "y", "command": ["true"]}]})
    lead = TaskSpec.model_validate({"id": "lead", "subtasks": [{"id": "s", "command": ["true"]}]})
    with pytest.raises(SwarmforgeError, match="subtasks cannot have subtasks"):
        Level([lead], depth=2, limit=1, ramp=None, parent="above", parked=set())


def test_isolation_fails_closed_before_anything_runs(tmp_path: Path) -> None:
    s = spec(
        [
            {"id": "plain", "command": sh("touch plain-ran")},
            {"id": "iso", "command": sh("touch marker"), "isolate": True},
        ]
    )
    with pytest.raises(IsolationUnavailable):
        Orchestrator(str(tmp_path), s).run()
    assert not (tmp_path / "plain-ran").exists() and not list(tmp_path.rglob("marker"))
    assert not Path(runs_dir(str(tmp_path))).exists(), "nothing was journaled"


def test_isolated_tasks_get_a_worktree_and_port_removed_afterwards(repo: Path) -> None:
    s = spec(
        [
            {
                "id": "iso",
                "command": sh("pwd > where; echo $PORT > port; touch dirty"),
                "isolate": True,
            }
        ]
    )
    result = Orchestrator(str(repo), s).run()
    assert result.counts == {"done": 1}
    rid = run_id(s)
    trail = [e for e in events(repo, rid) if e.kind == "worktree"]
    assert [e.action for e in trail] == ["created", "removed"]  # type: ignore[union-attr]
    assert not Path(trail[0].path).exists()  # type: ignore[union-attr]
    rescued = git(repo, "show", f"refs/swarmforge/rescue/{rid}/iso:port")
    assert 4000 <= int(rescued) < 5000
    assert git(repo, "show", f"refs/swarmforge/rescue/{rid}/iso:where") == trail[0].path  # type: ignore[union-attr]


def test_a_lead_is_done_iff_no_subtask_failed(tmp_path: Path) -> None:
    s = spec(
        [
            {
                "id": "good",
                "subtasks": [
                    {"id": "g1", "command": ["true"]},
                    {"id": "g2", "command": ["true"], "dependsOn": ["g1"]},
                ],
            },
            {
                "id": "bad",
                "fanOut": {
                    "items": ["x", "y"],
                    "template": {"id": "b-{{item}}", "command": ["test", "{{item}}", "=", "x"]},
                },
            },
            {"id": "after", "command": ["true"], "dependsOn": ["good"]},
        ]
    )
    result = Orchestrator(str(tmp_path), s).run()
    assert result.failed == ["b-y", "bad"]
    kinds = {
        e.id: e.status
        for e in events(tmp_path, run_id(s))  # type: ignore[union-attr]
        if e.kind == "task-state"
    }
    assert kinds["good"] == "done" and kinds["after"] == "done" and kinds["b-x"] == "done"


def test_the_fan_out_duplicate_error_names_both_items(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(
        json.dumps(
            {
                "goal": "g",
                "tasks": [
                    {
                        "id": "fan",
                        "fanOut": {
                            "items": ["a", "b", "a"],
                            "template": {"id": "t-{{item}}", "command": ["echo", "{{item}}"]},
                        },
                    }
                ],
            }
        )
    )
    r = sf("run", "spec.json", cwd=tmp_path)
    assert r.returncode == 1 and "'a' (1)" in r.stderr and "'a' (3)" in r.stderr


def test_a_corrupt_journal_line_stops_the_run_naming_file_and_line(tmp_path: Path) -> None:
    s = spec([{"id": "a", "command": ["true"]}, {"id": "b", "command": ["true"]}])
    Orchestrator(str(tmp_path), s).run()
    path = Path(runs_dir(str(tmp_path))) / run_id(s) / EVENTS
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = '{"seq": 3, "kind": "nonsense"}\n'
    path.write_text("".join(lines))
    (tmp_path / "spec.json").write_text(s.model_dump_json())
    r = sf("run", "spec.json", cwd=tmp_path)
    assert r.returncode == 1 and f"{path}, line 3" in r.stderr


TASKS = [
    {
        "id": f"t{i}",
        "command": sh(f"echo start t{i} >> log; sleep 0.05; echo end t{i} >> log"),
        "dependsOn": [f"t{i - 3}"] if i >= 3 else [],
    }
    for i in range(24)
]


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_never_reruns_a_finished_task(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(
        json.dumps({"goal": "kill", "maxConcurrency": 3, "tasks": TASKS})
    )
    rid = run_id(RunSpec.model_validate_json((tmp_path / "spec.json").read_text()))
    env = {**os.environ, "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    rng = random.Random(5)
    log_file = tmp_path / "log"

    def started() -> int:
        return log_file.read_text().count("start ") if log_file.exists() else 0

    for _ in range(5):
        before = started()
        proc = subprocess.Popen(
            [sys.executable, "-m", "swarmforge", "run", "spec.json"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Killed only once a task of this life is seen running: under load, a kill after
        # a fixed sleep could land before any task started, and leave no orphan at all.
        retry_until(
            lambda before=before, proc=proc: started() > before or proc.poll() is not None,
            timeout=60,
        )
        time.sleep(rng.uniform(0.0, 0.03))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert sf("run", "spec.json", cwd=tmp_path).returncode == 0
    trail = [e for e in events(tmp_path, rid) if e.kind == "task-state"]
    starts: dict[str, int] = {}
    for event in trail:
        if event.status == "running":  # type: ignore[union-attr]
            assert all(
                not (e.id == event.id and e.status == "done")  # type: ignore[union-attr]
                for e in trail
                if e.seq < event.seq
            ), f"{event.id} ran after it was done"  # type: ignore[union-attr]
            starts[event.id] = starts.get(event.id, 0) + 1  # type: ignore[union-attr]
    log = (tmp_path / "log").read_text().split("\n")
    for task in TASKS:
        ran = log.count(f"start {task['id']}")
        assert 1 <= ran <= starts[str(task["id"])], task["id"]
        assert log.count(f"end {task['id']}") >= 1
    assert any(n > 1 for n in starts.values()), "some orphan ran again"
    final = resume_states(str(Path(runs_dir(str(tmp_path))) / rid))[0]
    assert set(final.values()) == {"done"}


@pytest.mark.slow
def test_a_background_worker_outlives_a_killed_orchestrator_and_is_reattached(
    tmp_path: Path,
) -> None:
    (tmp_path / "spec.json").write_text(
        json.dumps(
            {
                "goal": "bg",
                "tasks": [
                    {
                        "id": "server",
                        "command": sh("sleep 1.5; echo served > served"),
                        "background": True,
                    },
                    {"id": "after", "command": sh("cat served > copied"), "dependsOn": ["server"]},
                ],
            }
        )
    )
    rid = run_id(RunSpec.model_validate_json((tmp_path / "spec.json").read_text()))
    env = {**os.environ, "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "swarmforge", "run", "spec.json"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pid_file = Path(runs_dir(str(tmp_path))) / rid / "reports" / "server.pid"
    retry_until(pid_file.exists)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    retry_until(lambda: (tmp_path / "served").exists(), timeout=10)
    r = sf("run", "spec.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "copied").read_text() == "served\n"
    runs = [
        e
        for e in events(tmp_path, rid)
        if e.kind == "task-state" and e.id == "server" and e.status == "running" and e.pid is None
    ]  # type: ignore[union-attr]
    assert len(runs) == 1, "re-attached, not started again"


def test_a_task_dispatched_to_a_headless_swarm_role(repo: Path) -> None:
    (repo / "swarmforge").mkdir()
    (repo / "swarmforge" / "swarmforge.conf").write_text(
        "window helper exec helper task sh -c 'cat > got.txt'\n"
    )
    (repo / "swarmforge" / "constitution.prompt").write_text("x\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "swarm")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        s = spec(
            [
                {"id": "ask", "role": "helper", "metadata": {"prompt": "Please help."}},
                {"id": "then", "command": ["true"], "dependsOn": ["ask"]},
            ]
        )
        result = Orchestrator(str(repo), s).run()
        assert result.counts == {"done": 2}
        record = sessionrecord.load(str(repo))
        assert record is not None
        got = (Path(record.roles[0].path) / "got.txt").read_text()
        assert "Please help." in got and "TASK_NAME: ask" in got
    finally:
        sf("down", cwd=repo)


def test_a_role_task_for_an_unknown_role_fails_before_anything_runs(tmp_path: Path) -> None:
    s = spec([{"id": "a", "command": sh("touch ran")}, {"id": "b", "role": "nobody"}])
    with pytest.raises(SwarmforgeError, match="role 'nobody'"):
        Orchestrator(str(tmp_path), s).run()
    assert not (tmp_path / "ran").exists()


def test_ramp_grows_concurrency_after_successes(tmp_path: Path) -> None:
    s = spec(
        [{"id": f"r{i}", "command": sh(f"echo r{i} >> ramp")} for i in range(6)],
        ramp={"initial": 1, "step": 1},
        maxConcurrency=3,
    )
    assert Orchestrator(str(tmp_path), s).run().counts == {"done": 6}
    running_at_once = 0
    live: set[str] = set()
    for e in events(tmp_path, run_id(s)):
        if e.kind == "task-state":
            if e.status == "running":  # type: ignore[union-attr]
                live.add(e.id)  # type: ignore[union-attr]
            else:
                live.discard(e.id)  # type: ignore[union-attr]
            running_at_once = max(running_at_once, len(live))
        if e.kind == "task-state" and e.id == "r0" and e.status == "running":  # type: ignore[union-attr]
            assert len(live) == 1, "the ramp starts with one task"
    assert running_at_once <= 3


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_role_task_wakes_the_roles_tmux_agent(repo: Path, tmp_path: Path) -> None:
    from swarmforge.daemon.wake import WAKE_LINE
    from tests.support import fake_agent, make_swarm

    tools = fake_agent(tmp_path / "tools", "fakeagent")
    make_swarm(repo, "window helper fakeagent helper\n", prompts={"helper": "Help.\n"})
    assert sf("up", "--stagger", "0", cwd=repo, path_extra=f"{tools}:").returncode == 0
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        heard = Path(record.roles[0].path) / "agent-heard.txt"
        retry_until((Path(record.roles[0].path) / "agent-start.json").exists)
        s = spec([{"id": "ask", "role": "helper"}])
        orch = Orchestrator(str(repo), s)
        preflight(orch.root, orch.run_id, list(s.tasks))
        runner = threading.Thread(target=orch.run, daemon=True)
        runner.start()
        retry_until(lambda: heard.exists() and WAKE_LINE in heard.read_text())
        # Act as the agent would on hearing it: take the task and complete it.
        from swarmforge.handoff.done import done_task
        from swarmforge.handoff.mailbox import Mailbox
        from swarmforge.handoff.ready import ready_task

        box = Mailbox(record.roles[0].path)
        assert ready_task(box) is not None
        done_task(box)
        runner.join(timeout=30)
        assert not runner.is_alive()
    finally:
        sf("down", cwd=repo)


def test_a_dependent_starts_only_once_its_dependency_outcome_is_durable(tmp_path: Path) -> None:
    durable_at: list[tuple[str, int]] = []

    class Launches(Dispatch):
        """Records how far the journal was on disk whenever a task was started."""

        def launch(self, flight: Flight) -> None:
            durable_at.append((flight.task_id, self.run.committer.durable))
            super().launch(flight)

    class Watched(Orchestrator):
        dispatch_class = Launches

    s = spec(
        [
            {"id": "a", "command": ["true"]},
            {"id": "b", "command": ["true"], "dependsOn": ["a"]},
            {"id": "c", "command": ["true"], "dependsOn": ["b"]},
            {"id": "free", "command": ["true"]},
        ]
    )
    assert Watched(str(tmp_path), s).run().counts == {"done": 4}
    outcome = {
        e.id: e.seq
        for e in events(tmp_path, run_id(s))
        if isinstance(e, TaskState) and e.status == "done"
    }
    durable = dict(durable_at)
    assert durable["b"] >= outcome["a"] and durable["c"] >= outcome["b"]


def test_a_command_that_cannot_start_fails_with_the_reason_in_its_report(tmp_path: Path) -> None:
    s = spec(
        [
            {"id": "missing", "command": ["no-such-command-anywhere"]},
            {"id": "output", "command": sh("echo out; echo err >&2; exit 4")},
        ]
    )
    result = Orchestrator(str(tmp_path), s).run()
    assert result.failed == ["missing", "output"]
    reports = Path(runs_dir(str(tmp_path))) / run_id(s) / "reports"
    missing = (reports / "missing.failed.md").read_text()
    assert "cannot run no-such-command-anywhere" in missing and '"exitCode": null' in missing
    output = (reports / "output.failed.md").read_text()
    assert '"exitCode": 4' in output
    assert "## stdout\n\n```text\nout\n```" in output
    assert "## stderr\n\n```text\nerr\n```" in output


def test_a_rerun_orphan_replaces_the_report_its_killed_attempt_left(tmp_path: Path) -> None:
    s = spec([{"id": "flaky", "command": sh("test -e fixed")}])
    assert Orchestrator(str(tmp_path), s).run().failed == ["flaky"]
    run_dir = Path(runs_dir(str(tmp_path))) / run_id(s)
    # The image of a crash after the report was published but before its outcome was
    # journaled: cut the journal at that outcome, drop the later checkpoint.
    lines = (run_dir / EVENTS).read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"status":"failed"' in line)
    (run_dir / EVENTS).write_text("".join(lines[:cut]))
    (run_dir / CHECKPOINT).unlink()
    (tmp_path / "fixed").touch()
    assert Orchestrator(str(tmp_path), s).run().counts == {"done": 1}
    assert sorted(p.name for p in (run_dir / "reports").iterdir()) == ["flaky.complete.md"]


def test_sigterm_stops_the_run_and_kills_the_commands_it_started(tmp_path: Path) -> None:
    from swarmforge import tagging

    (tmp_path / "spec.json").write_text(
        json.dumps({"goal": "term", "tasks": [{"id": "long", "command": ["sleep", "300"]}]})
    )
    rid = run_id(RunSpec.model_validate_json((tmp_path / "spec.json").read_text()))
    env = {**os.environ, "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    proc = subprocess.Popen(
        [SWARMFORGE, "run", "spec.json"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def sleeping() -> list[object]:
        found = tagging.tagged(str(tmp_path), rid, scope=tagging.PLANNED_RUN)
        return [p for p in found if p.name() == "sleep"]

    retry_until(sleeping)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    retry_until(lambda: sleeping() == [])  # a SIGKILL takes effect a moment after it is sent
    states, journal = resume_states(str(Path(runs_dir(str(tmp_path))) / rid))
    journal.close()
    assert states == {"long": "running"}, "an orphan: it runs again on the next resume"


def test_down_and_gc_of_a_session_leave_a_planned_runs_commands_running(repo: Path) -> None:
    from swarmforge import tagging

    (repo / "swarmforge" / "roles").mkdir(parents=True)
    (repo / "swarmforge" / "swarmforge.conf").write_text("window keeper exec keeper task cat\n")
    (repo / "swarmforge" / "constitution.prompt").write_text("Work carefully.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "swarm")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    (repo / "spec.json").write_text(
        json.dumps({"goal": "both", "tasks": [{"id": "long", "command": ["sleep", "300"]}]})
    )
    rid = run_id(RunSpec.model_validate_json((repo / "spec.json").read_text()))
    env = {**os.environ, "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    run = subprocess.Popen(
        [SWARMFORGE, "run", "spec.json"], cwd=repo, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:

        def sleeping() -> list[int]:
            found = tagging.tagged(str(repo), rid, scope=tagging.PLANNED_RUN)
            return [p.pid for p in found if p.name() == "sleep"]

        retry_until(sleeping)
        before = sleeping()
        for command in (["down"], ["gc"], ["gc", "--artifacts"]):
            r = sf(*command, cwd=repo)
            assert r.returncode == 0, r.stderr
            assert sleeping() == before and run.poll() is None, command
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=30)


def test_a_role_tasks_text_with_control_characters_never_breaks_its_header(
    project: Project,
) -> None:
    from swarmforge import roletable as projects
    from swarmforge.handoff import message
    from swarmforge.run import roletask

    entry = projects.read_roles(str(project.root))["coder"]
    name = roletask.handoff_name("coder", 1)
    text = "\x1b[31mRed alert\x00 and a bell\x07\nsecond line\n"
    path = roletask.deliver(entry, name, "run1", "t1", text)
    handoff = message.read(path)
    assert handoff.get("message") == "[31mRed alert and a bell"
    assert text in handoff.body
    result = run_script("ready_for_next.sh", project.tree("coder"), "coder")
    assert result.returncode == 0, result.stderr


def test_a_checkpoint_edited_into_an_impossible_state_is_named_not_a_traceback(
    tmp_path: Path,
) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(
        json.dumps(
            {
                "goal": "edited",
                "tasks": [
                    {"id": "t0", "command": ["false"]},
                    {"id": "t1", "command": ["true"], "dependsOn": ["t0"]},
                ],
            }
        )
    )
    git(tmp_path, "init", "-q")
    first = sf("run", str(spec_file), "--json", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    rid = json.loads(first.stdout)["runId"]
    checkpoint = Path(runs_dir(str(tmp_path))) / rid / CHECKPOINT
    data = json.loads(checkpoint.read_text())
    data["states"]["t1"] = "ready"  # its dependency failed: it can never have been ready
    checkpoint.write_text(json.dumps(data))
    again = sf("run", str(spec_file), cwd=tmp_path)
    assert again.returncode == 1
    assert "Traceback" not in again.stderr
    assert f"{checkpoint}: cannot restore task 't1' as ready" in again.stderr
