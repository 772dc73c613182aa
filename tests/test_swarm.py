"""Sessions end to end: real worktrees, processes, tmux sessions, and teardown."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from swarmforge import tagging
from swarmforge.config import sessionrecord
from swarmforge.daemon import wake
from swarmforge.handoff import message
from swarmforge.layout import RUNNER_LOCK
from swarmforge.locks import is_held
from swarmforge.proc import liveness
from swarmforge.tempdirs import project_temp
from swarmforge.tmux.server import project_socket
from tests.support import (
    commit_all,
    completed,
    fake_agent,
    git,
    kick,
    make_swarm,
    nothing_left,
    retry_until,
)
from tests.support import run_cli as sf

HAS_TMUX = shutil.which("tmux") is not None
RELAY = """#!/bin/sh
# Exec role: record the work, commit it, hand it to the next role.
set -eu
cat > "last-$SWARMFORGE_ROLE.txt"
echo "$SWARMFORGE_ROLE $PORT" >> chain.txt
git add chain.txt
git -c user.name=relay -c user.email=relay@example.com commit -q -m "$SWARMFORGE_ROLE worked"
printf 'type: git_handoff\\nto: %s\\npriority: 50\\ntask: chain\\ncommit: %s\\n' \\
    "$1" "$(git rev-parse --short=10 HEAD)" > .draft
swarm_handoff.sh .draft
"""


CHAIN = (
    "window alpha exec alpha task ./relay.sh beta\n"
    "window beta exec beta task ./relay.sh gamma\n"
    "window gamma exec gamma task ./relay.sh delta\n"
    "window delta exec delta batch sh -c 'cat > received.txt'\n"
)


def test_a_headless_chain_of_exec_roles_relays_work_then_goes_down(repo: Path) -> None:
    make_swarm(repo, CHAIN, {"relay.sh": RELAY})
    r = sf("up", "--backend", "headless", cwd=repo)
    assert r.returncode == 0, r.stderr
    record = sessionrecord.load(str(repo))
    assert record is not None and record.backend == "headless"
    assert sf("up", cwd=repo).stdout.startswith(f"swarm {record.run_id} already running")
    kick(record, "alpha", "delta")
    retry_until(lambda: len(completed(record, "delta")) == 1, timeout=60)
    final = message.read(str(completed(record, "delta")[0]))
    assert final.get("from") == "gamma" and final.get("type") == "git_handoff"
    gamma = record.role("gamma")
    assert gamma is not None and final.get("commit") == git(
        Path(gamma.path), "rev-parse", "--short=10", "HEAD"
    )
    for name in ("alpha", "beta", "gamma"):
        role = record.role(name)
        assert role is not None
        assert git(Path(role.path), "log", "-1", "--format=%s") == f"{name} worked"
        assert (Path(role.path) / "chain.txt").read_text() == f"{name} {role.port}\n"
    ports = [r.port for r in record.roles]
    assert len(set(ports)) == 4 and all(4000 <= p < 5000 for p in ports)
    state = json.loads(sf("status", "--json", cwd=repo).stdout)
    assert [r["alive"] for r in state["roles"]] == [True] * 4
    assert state["roles"][3]["current"] is None and state["roles"][3]["queued"] == 0
    # The daemon captured each role's work as it sent and received, in the background.
    for role in ("alpha", "beta", "gamma"):
        retry_until(lambda role=role: any("handoff" in t for t in triggers(repo, role)))
    delta = record.role("delta")
    assert delta is not None
    (Path(delta.path) / "draft.txt").write_text("not committed\n")
    r = sf("down", cwd=repo)
    assert r.returncode == 0, r.stderr
    nothing_left(repo)
    assert sessionrecord.load(str(repo)).state == "stopped"  # type: ignore[union-attr]
    # What delta had not committed was captured, by the daemon as it stopped or by `down`.
    last = git(repo, "for-each-ref", "--sort=-refname", "--count=1", "--format=%(refname)",
               "refs/swarmforge/captures/delta/")  # fmt: skip
    assert git(repo, "show", f"{last}:draft.txt") == "not committed"


def triggers(repo: Path, role: str) -> set[str]:
    """What took each capture of `role`'s work."""
    out = git(
        repo, "for-each-ref", "--format=%(contents:subject)", f"refs/swarmforge/captures/{role}/"
    )
    return {line.partition(": ")[2] for line in out.splitlines()}


# Starts a process that keeps only the role's TMPDIR of its environment and leaves its
# session, as codex starts the helper of its sandbox; it outlives the command. The
# command ends once the process has its own environment (codex spawns its helper with
# it at once; a shell's `&` forks with ours first).
STRAY = (
    "window maker exec maker task sh -c "
    '\'env -i TMPDIR="$TMPDIR" PATH=/usr/bin:/bin setsid sleep 300 < /dev/null '
    "> /dev/null 2>&1 & p=$!; while grep -qs SWARMFORGE /proc/$p/environ; do sleep 0.01; "
    "done; echo $p > stray.pid'\n"
)


def one_item_done(repo: Path, conf: str, role: str) -> sessionrecord.SessionRecord:
    """A headless swarm of `conf` up, with one item handed to `role` and completed."""
    make_swarm(repo, conf)
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    record = sessionrecord.load(str(repo))
    assert record is not None
    kick(record, role, "someone")
    retry_until(lambda: len(completed(record, role)) == 1, timeout=30)
    return record


def test_what_an_agent_started_with_an_environment_of_its_own_is_ended(repo: Path) -> None:
    try:
        record = one_item_done(repo, STRAY, "maker")
        role = record.role("maker")
        assert role is not None
        # A headless role's loop ends it as soon as the item's command is over.
        left = int((Path(role.path) / "stray.pid").read_text())
        retry_until(lambda: not liveness.is_alive(left))
        log = (repo / ".swarmforge" / "logs" / "maker.log").read_text()
        assert "maker: ended 1 process(es) its command left behind" in log
        # `down` ends one left by an agent in tmux, untagged but in the role's TMPDIR.
        temp = str(project_temp(str(repo)) / "maker")
        env = {"TMPDIR": temp, "PATH": "/usr/bin:/bin"}
        with subprocess.Popen(["sleep", "300"], env=env, start_new_session=True) as stray:
            found = tagging.tagged(str(repo))
            assert stray.pid in {p.pid for p in found}
            assert stray.pid not in {p.pid for p in tagging.tagged(str(repo), record.run_id)}
            assert sf("down", cwd=repo).returncode == 0
            assert stray.wait(timeout=10) == -signal.SIGTERM
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_a_failing_exec_command_is_retried_then_completed_as_failed(repo: Path) -> None:
    flaky = "window flaky exec flaky task sh -c 'echo run >> runs.txt; exit 3'\n"
    try:
        record = one_item_done(repo, flaky, "flaky")
        done = message.read(str(completed(record, "flaky")[0]))
        assert (done.get("outcome"), done.get("exit_code")) == ("failed", "3")
        role = record.role("flaky")
        assert role is not None and (Path(role.path) / "runs.txt").read_text() == "run\n" * 3
        state = json.loads(sf("status", "--json", cwd=repo).stdout)
        assert state["roles"][0]["failed_items"] == 1
        log = (repo / ".swarmforge" / "logs" / "flaky.log").read_text()
        assert "outcome failed, exit code 3" in log
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


@pytest.mark.slow
def test_runner_killed_20_times_then_gc_leaves_nothing_and_loses_no_work(repo: Path) -> None:
    make_swarm(repo, CHAIN, {"relay.sh": RELAY})
    rng = random.Random(7)
    dirty: Path | None = None
    for kill in range(20):
        r = sf("up", "--backend", "headless", cwd=repo)
        assert r.returncode == 0, r.stderr
        record = sessionrecord.load(str(repo))
        assert record is not None and record.runner_pid
        if dirty is None:
            beta = record.role("beta")
            assert beta is not None
            dirty = Path(beta.path) / "unsaved.txt"
            dirty.write_text("work in progress\n")
        if kill % 5 == 0:
            kick(record, "alpha", "delta") if not completed(record, "alpha") else None
        time.sleep(rng.uniform(0.0, 0.4))
        os.kill(record.runner_pid, signal.SIGKILL)
        retry_until(lambda: not is_held(str(repo / RUNNER_LOCK)))
    report = json.loads(sf("gc", "--json", cwd=repo).stdout)
    assert report["live"] is False
    nothing_left(repo)
    assert dirty is not None and dirty.read_text() == "work in progress\n"
    r = sf("down", "--purge", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert not dirty.exists()
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/swarmforge/rescue/")
    beta_ref = next(ref for ref in refs.split() if ref.endswith("/beta"))
    assert git(repo, "show", f"{beta_ref}:unsaved.txt") == "work in progress"
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    nothing_left(repo)


# What the shell that runs `up` holds and no agent was given.
SECRETS = {"GITHUB_TOKEN": "ghp-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret", "MY_DB_URL": "pg"}


@pytest.mark.parametrize("backend", ["tmux", "headless"])
def test_an_agent_gets_only_the_environment_it_is_given(
    repo: Path, tmp_path: Path, backend: str
) -> None:
    if backend == "tmux" and not HAS_TMUX:
        pytest.skip("tmux is not installed")
    tools = fake_agent(tmp_path / "tools", "fakeagent")
    make_swarm(
        repo,
        "window coder fakeagent coder\n",
        files={
            "swarmforge/swarmforge.toml": (
                "[roles.coder]\n"
                'env = { GIVEN = "yes" }\n'
                'pass_env = ["PASSED_*", "LANG"]\n'
                "[bootstrap]\n"
                'setup = ["env > ../setup-env.txt"]\n'
            )
        },
        prompts={"coder": "Code.\n"},
    )
    given = {**SECRETS, "PASSED_ONE": "1", "LANG": "C.UTF-8", "TERM": "xterm"}
    r = sf(
        "up", "--backend", backend, "--stagger", "0",
        cwd=repo, path_extra=f"{tools}:", env_extra=given,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    try:
        record = sessionrecord.load(str(repo))
        coder = record.role("coder") if record is not None else None
        assert coder is not None
        start = Path(coder.path) / "agent-start.json"
        retry_until(start.exists)
        env = json.loads(start.read_text())["env"]
        assert not set(SECRETS) & set(env), "a secret of up's shell reached the agent"
        assert env["GIVEN"] == "yes" and env["PASSED_ONE"] == "1" and env["LANG"] == "C.UTF-8"
        assert env["HOME"] == "/nonexistent" and env["SWARMFORGE_ROLE"] == "coder"
        assert env["PATH"].startswith(str((repo / ".swarmforge" / "bin").resolve()))
        assert int(env["SHLVL"]) >= 1  # as in a terminal: bash then reads no ~/.bashrc
        # The user's own setup command of a new worktree keeps the whole environment.
        setup_env = (Path(coder.path).parent / "setup-env.txt").read_text()
        assert "GITHUB_TOKEN=ghp-secret" in setup_env
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


@pytest.mark.skipif(not HAS_TMUX, reason="tmux is not installed")
def test_tmux_backend_runs_an_interactive_agent_and_wakes_it(repo: Path, tmp_path: Path) -> None:
    tools = fake_agent(tmp_path / "tools", "fakeagent")
    make_swarm(
        repo,
        "window coder fakeagent coder\nwindow qa exec qa batch true\n",
        prompts={"coder": "Code.\n"},
    )
    r = sf("up", "--stagger", "0", cwd=repo, path_extra=f"{tools}:")
    assert r.returncode == 0, r.stderr
    record = sessionrecord.load(str(repo))
    assert record is not None and record.backend == "tmux"
    coder = record.role("coder")
    assert coder is not None
    start = Path(coder.path) / "agent-start.json"
    try:
        retry_until(start.exists)
        seen = json.loads(start.read_text())
        assert seen["cwd"] == coder.path
        assert seen["env"]["PORT"] == seen["env"]["SWARMFORGE_PORT"] == str(coder.port)
        assert seen["env"]["SWARMFORGE_ROLE"] == "coder"
        assert seen["env"]["SWARMFORGE_RUN_ID"] == record.run_id
        assert "swarmforge/constitution.prompt" in seen["argv"][-1]
        kick(record, "qa", "coder")  # not a wake-up for coder
        qa = record.role("qa")
        assert qa is not None
        (Path(qa.path) / "d").write_text("type: note\nto: coder\npriority: 50\nmessage: hi\n")
        helper = repo / ".swarmforge" / "bin" / "swarm_handoff.sh"
        sent = subprocess.run(
            [helper, "d"],
            cwd=qa.path,
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "SWARMFORGE_ROLE": "qa"},
        )
        assert sent.returncode == 0, sent.stderr
        heard = Path(coder.path) / "agent-heard.txt"
        retry_until(lambda: heard.exists() and wake.WAKE_LINE in heard.read_text())
        state = json.loads(sf("status", "--json", cwd=repo).stdout)
        assert state["roles"][0]["alive"] is True and state["roles"][0]["queued"] == 1
    finally:
        r = sf("down", cwd=repo)
    assert r.returncode == 0, r.stderr
    nothing_left(repo)
    assert (
        subprocess.run(
            ["tmux", "-L", project_socket(str(repo)), "list-sessions"], capture_output=True
        ).returncode
        != 0
    )


SIX_PACK = """# SwarmForge six-pack
window specifier codex master
window coder codex coder
window cleaner codex cleaner batch
window architect codex architect batch
window hardender codex hardender batch
window QA codex QA batch
"""


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TMUX, reason="tmux is not installed")
def test_a_swarmforge_six_pack_starts_unchanged(repo: Path, tmp_path: Path) -> None:
    tools = fake_agent(tmp_path / "tools", "codex")
    make_swarm(repo, SIX_PACK)
    roles = ("specifier", "coder", "cleaner", "architect", "hardender", "QA")
    for role in roles:
        (repo / "swarmforge" / "roles" / f"{role}.prompt").write_text(f"You are {role}.\n")
    articles = repo / "swarmforge" / "constitution" / "articles"
    articles.mkdir(parents=True)
    (articles / "project.prompt").write_text("This project builds a game.\n")
    commit_all(repo)
    r = sf("up", "--stagger", "0", cwd=repo, path_extra=f"{tools}:")
    assert r.returncode == 0, r.stderr
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        assert [r.name for r in record.roles] == list(roles)
        rows = (repo / ".swarmforge" / "roles.tsv").read_text().splitlines()
        assert [row.split("\t")[6] for row in rows] == ["task", "task"] + ["batch"] * 4
        for role in record.roles:
            start = Path(role.path) / "agent-start.json"
            retry_until(start.exists)
            if role.name == "specifier":
                continue  # shares the main checkout; its start file may be anyone's there
            argv = json.loads(start.read_text())["argv"]
            assert argv[1:3] == ["-C", role.path]
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_port_needs_no_project(tmp_path: Path) -> None:
    r = sf("port", "swarm/run/coder", cwd=tmp_path)
    assert r.returncode == 0 and 4000 <= int(r.stdout) < 5000
    assert sf("port", "swarm/run/coder", cwd=tmp_path).stdout == r.stdout


def test_up_without_a_configuration_says_what_to_do(tmp_path: Path) -> None:
    r = sf("up", cwd=tmp_path)
    assert r.returncode == 1
    assert "No swarmforge/swarmforge.conf" in r.stderr and "swarmforge init" in r.stderr


def test_all_processes_are_gone_after_down(repo: Path) -> None:
    # A role that leaves a "dev server" behind with setsid: down still finds it by its tag.
    make_swarm(repo, "window web exec web task sh -c 'setsid sleep 300 & exit 0'\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    record = sessionrecord.load(str(repo))
    assert record is not None
    kick(record, "web", "someone")
    retry_until(lambda: any("sleep" in " ".join(p.cmdline()) for p in tagging.tagged(str(repo))))
    assert sf("down", cwd=repo).returncode == 0
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] == ["sleep", "300"]
        and liveness.is_alive(p.pid)
        and p.environ().get(tagging.PROJECT_TAG) == os.path.realpath(repo)
    ]
    nothing_left(repo)


@pytest.mark.slow
def test_the_sleep_inhibitor_lives_as_long_as_the_run(repo: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    inhibit = tools / "systemd-inhibit"
    inhibit.write_text("#!/bin/sh\nexec sleep 300\n")
    inhibit.chmod(0o755)
    make_swarm(repo, "window solo exec solo task true\n")
    r = sf("up", "--backend", "headless", "--inhibit-sleep", cwd=repo, path_extra=f"{tools}:")
    assert r.returncode == 0, r.stderr
    record = sessionrecord.load(str(repo))
    assert record is not None and liveness.is_alive(record.inhibitor_pid)
    assert sf("down", cwd=repo).returncode == 0
    assert not liveness.is_alive(record.inhibitor_pid)
    nothing_left(repo)


def test_gc_where_no_swarm_ever_ran(tmp_path: Path) -> None:
    (tmp_path / "swarmforge").mkdir()
    (tmp_path / "swarmforge" / "swarmforge.conf").write_text("window a exec a task true\n")
    r = sf("gc", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["run_id"] is None and report["processes"] == [] and report["worktrees"] == []
