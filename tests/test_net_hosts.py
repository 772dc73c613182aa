"""Roles on several hosts: `up --host`, mail between the hosts' daemons, commits through
the hub. Each host is a clone of one bare hub repository with a daemon of its own, all
on this machine, talking through a real nats-server (tests/natsserver.py)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmforge.config import sessionrecord
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox
from tests.natsserver import NatsServer, free_port, nats_server, require_nats, running_server
from tests.realagents import LiveSwarm
from tests.support import Project, commit_all, git, make_swarm, queue_note, retry_until
from tests.support import kick as kick_role
from tests.support import run_cli as sf

__all__ = ["nats_server"]  # the fixture, used by name

HAND = """#!/bin/sh
# Exec role on the first host: commit a change, hand it to the cleaner on box-b.
set -eu
cat > /dev/null
echo "work of $SWARMFORGE_ROLE" > feature.txt
git add feature.txt
git -c user.name=coder -c user.email=coder@example.com commit -q -m "coder's feature"
printf 'type: git_handoff\\nto: cleaner\\npriority: 50\\ntask: tidy\\ncommit: %s\\n' \\
    "$(git rev-parse --short=10 HEAD)" > .draft
swarm_handoff.sh .draft
"""
MERGE = """#!/bin/sh
# Exec role on box-b: merge the commit the handoff names.
set -eu
task=$(sed -n 's/^TASK: //p' | head -n 1)
commit=$(sed -n 's/^commit: //p' "$task")
sed -n 's/^merge_check: //p' "$task" > merge-check.txt
git -c user.name=cleaner -c user.email=cleaner@example.com merge -q --no-edit "$commit"
"""
CONF = "window coder exec coder task ./hand.sh\nwindow cleaner exec cleaner task ./merge.sh\n"


def settings_toml(url: str, hub: Path) -> str:
    return f'[transport]\nurl = "{url}"\nhub = "{hub}"\n\n[roles.cleaner]\nhost = "box-b"\n'


@pytest.fixture
def hosts(repo: Path, tmp_path: Path, nats_server: NatsServer) -> Iterator[tuple[Path, Path]]:
    """The first host's clone (`repo`, runs coder) and box-b's (runs cleaner), one hub."""
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    make_swarm(repo, CONF, {"hand.sh": HAND, "merge.sh": MERGE})
    (repo / "swarmforge" / "swarmforge.toml").write_text(settings_toml(nats_server.url, hub))
    commit_all(repo)
    git(repo, "push", "-q", str(hub), "main")
    box_b = tmp_path / "box-b"
    git(tmp_path, "clone", "-q", str(hub), str(box_b))
    yield repo, box_b
    for root in (repo, box_b):
        sf("down", cwd=root)


def kick(root: Path, role: str) -> None:
    """Put a note for `role` straight into its inbox: its exec command runs once."""
    record = sessionrecord.load(str(root))
    assert record is not None
    kick_role(record, role, "user")


def note(tree: Path, sender: str, to: str, text: str) -> str:
    """Queue a note through the gate in `tree`, as the sender's agent would."""
    from swarmforge.handoff import gate

    draft = tree / f"draft-{text.replace(' ', '-')}"
    draft.write_text(f"type: note\nto: {to}\npriority: 50\nmessage: {text}\n")
    return gate.queue_handoff(str(draft), cwd=str(tree), role=sender)


def role_tree(root: Path, role: str) -> Path:
    record = sessionrecord.load(str(root))
    assert record is not None
    found = record.role(role)
    assert found is not None
    return Path(found.path)


def completed(tree: Path) -> list[Path]:
    return sorted(Path(Mailbox(str(tree)).path(Box.COMPLETED)).rglob("*.handoff"))


def test_a_git_handoff_crosses_to_a_cleaner_on_another_host_who_merges_it(
    hosts: tuple[Path, Path],
) -> None:
    first, box_b = hosts
    up_a = sf("up", "--backend", "headless", cwd=first)
    assert up_a.returncode == 0, up_a.stderr
    up_b = sf("up", "--backend", "headless", "--host", "box-b", cwd=box_b)
    assert up_b.returncode == 0, up_b.stderr
    assert "coder          on the host started without --host" in up_b.stdout
    assert "cleaner        on box-b" in up_a.stdout
    record_a, record_b = sessionrecord.load(str(first)), sessionrecord.load(str(box_b))
    assert record_a is not None and record_b is not None
    assert [r.name for r in record_a.roles] == ["coder"] and record_a.remote == {"cleaner": "box-b"}
    assert [r.name for r in record_b.roles] == ["cleaner"] and record_b.remote == {"coder": ""}
    assert record_b.host == "box-b" and record_a.host is None
    # Each host's helpers know the other's roles by name, and nothing of theirs is made here.
    assert "cleaner" in (first / ".swarmforge" / "roles.tsv").read_text()
    assert not (first / ".worktrees" / "cleaner").exists()

    kick(first, "coder")
    cleaner = role_tree(box_b, "cleaner")
    retry_until(lambda: len(completed(cleaner)) == 1, timeout=60)
    coder = role_tree(first, "coder")
    sent = [p.name for p in Path(Mailbox(str(coder)).path(Box.SENT)).iterdir()]
    assert len(sent) == 1 and sent[0].endswith("_to_cleaner.handoff")
    copy = message.read(str(completed(cleaner)[0]))
    assert copy.get("from") == "coder" and copy.get("recipient") == "cleaner"
    assert copy.get("merge_check") == "clean"
    assert (cleaner / "merge-check.txt").read_text() == "clean\n"
    # The cleaner merged the coder's commit, which came through the hub.
    assert (cleaner / "feature.txt").read_text() == "work of coder\n"
    commit = git(coder, "rev-parse", "HEAD")
    assert git(cleaner, "merge-base", "--is-ancestor", commit, "HEAD") == ""
    # Both hosts' event logs tell their half.
    sent_events = [e for e in events(first) if e["kind"] == "handoff-sent"]
    assert [(e["to"], e["host"]) for e in sent_events] == [("cleaner", "box-b")]
    delivered = [e for e in events(box_b) if e["kind"] == "handoff-delivered"]
    assert [(e["from"], e["to"]) for e in delivered if e["to"] == "cleaner"] == [
        ("coder", "cleaner")
    ]


def events(root: Path) -> list[dict[str, object]]:
    lines = (root / ".swarmforge" / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_host_that_was_down_receives_what_was_queued_for_it(hosts: tuple[Path, Path]) -> None:
    first, box_b = hosts
    assert sf("up", "--backend", "headless", cwd=first).returncode == 0
    # box-b has not started: the mail waits on the server, the originals are sent.
    coder = role_tree(first, "coder")
    names = [note(coder, "coder", "cleaner", f"note {i}") for i in range(3)]
    mailbox = Mailbox(str(coder))
    sent_box, out_box = Path(mailbox.path(Box.SENT)), Path(mailbox.path(Box.OUTBOX))
    retry_until(lambda: len(list(sent_box.iterdir())) == 3, timeout=30)
    assert [p.name for p in out_box.iterdir()] == ["tmp"]
    # The user's own handoff, from the first host's main checkout, crosses too.
    sent = sf("send", "cleaner", "from the user", cwd=first)
    assert sent.returncode == 0, sent.stderr
    names.append(sent.stdout.strip().split()[-1])
    retry_until(lambda: Mailbox(str(first)).items(Box.SENT) != [], timeout=30)
    up_b = sf("up", "--backend", "headless", "--host", "box-b", cwd=box_b)
    assert up_b.returncode == 0, up_b.stderr
    cleaner = role_tree(box_b, "cleaner")
    retry_until(lambda: len(completed(cleaner)) == 4, timeout=60)
    assert sorted(p.name for p in completed(cleaner)) == sorted(Path(n).name for n in names)


def test_up_says_in_one_line_that_the_server_cannot_be_reached(repo: Path, tmp_path: Path) -> None:
    require_nats()
    make_swarm(repo, CONF, {"hand.sh": HAND, "merge.sh": MERGE})
    url = f"nats://127.0.0.1:{free_port()}"
    (repo / "swarmforge" / "swarmforge.toml").write_text(settings_toml(url, tmp_path / "h.git"))
    r = sf("up", "--backend", "headless", cwd=repo)
    assert r.returncode == 1
    assert "connection refused" in r.stderr and "Traceback" not in r.stderr
    assert sessionrecord.load(str(repo)) is None  # nothing was started or recorded


def test_up_says_in_one_line_that_the_login_was_refused(repo: Path, tmp_path: Path) -> None:
    server = running_server(tmp_path, user="swarm", password="right")
    url = next(server).url
    try:
        make_swarm(repo, CONF, {"hand.sh": HAND, "merge.sh": MERGE})
        (repo / "swarmforge" / "swarmforge.toml").write_text(settings_toml(url, tmp_path / "h"))
        env = {**os.environ, "SWARMFORGE_NATS_USER": "swarm", "SWARMFORGE_NATS_PASSWORD": "no"}
        r = subprocess.run(
            [sys.executable, "-m", "swarmforge", "up", "--backend", "headless"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 1
        assert "refused the login" in r.stderr and "Traceback" not in r.stderr
    finally:
        server.close()


def test_host_placement_errors_are_clear(repo: Path, tmp_path: Path) -> None:
    make_swarm(repo, CONF, {"hand.sh": HAND, "merge.sh": MERGE})
    toml = repo / "swarmforge" / "swarmforge.toml"
    toml.write_text('[roles.cleaner]\nhost = "box-b"\n')
    r = sf("up", "--backend", "headless", cwd=repo)
    assert r.returncode == 1 and "places cleaner on other hosts" in r.stderr
    toml.write_text("")
    r = sf("up", "--backend", "headless", "--host", "box-b", cwd=repo)
    assert r.returncode == 1 and "no [transport]" in r.stderr
    assert sessionrecord.load(str(repo)) is None


# -- 200 broadcasts across three hosts, daemons and the server killed -------------------


class Host:
    """One host: a clone of the hub with its own roles' worktrees and its own daemon."""

    def __init__(self, root: Path, local: dict[str, str], remote: dict[str, str]) -> None:
        self.project = Project(root, local)
        self.root = root
        rows = [
            f"{r}\t{r}\t{root}/.worktrees/{r}\tswarmforge-{r}\t{r}\tcodex\ttask" for r in remote
        ]
        with (root / ".swarmforge" / "roles.tsv").open("a") as f:
            f.write("\n".join(rows) + "\n")
        (root / ".swarmforge" / "remote.tsv").write_text(
            "".join(f"{r}\t{h}\n" for r, h in remote.items())
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [sys.executable, "-m", "swarmforge", "daemon", "run", "--project", str(self.root)]
        self.process = subprocess.Popen(
            [*argv, "--notify", "none"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


def three_hosts(tmp_path: Path, repo: Path, url: str) -> list[Host]:
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    (repo / "swarmforge").mkdir()
    (repo / "swarmforge" / "swarmforge.toml").write_text(
        f'[transport]\nurl = "{url}"\nhub = "{hub}"\n'
    )
    commit_all(repo)
    git(repo, "push", "-q", str(hub), "main")
    clones = [repo]
    for name in ("b", "c"):
        git(tmp_path, "clone", "-q", str(hub), str(tmp_path / name))
        clones.append(tmp_path / name)
    return [
        Host(clones[0], {"sender": "task"}, {"r1": "b", "r2": "b", "r3": "c"}),
        Host(clones[1], {"r1": "task", "r2": "task"}, {"sender": "", "r3": "c"}),
        Host(clones[2], {"r3": "task"}, {"sender": "", "r1": "b", "r2": "b"}),
    ]


@pytest.mark.slow
def test_200_broadcasts_survive_killed_daemons_and_a_restarted_server(
    repo: Path, tmp_path: Path, nats_server: NatsServer
) -> None:
    hosts = three_hosts(tmp_path, repo, nats_server.url)
    sender = hosts[0]
    rng = random.Random(15)
    for host in hosts:
        host.start()
    texts: dict[str, str] = {}
    try:
        for i in range(200):
            name = queue_note(sender.project, "sender", "r1,r2,r3", f"n{i}", f"d{i}")
            texts[Path(name).name] = f"n{i}"
            if rng.random() < 0.08:
                victim = rng.choice(hosts)
                victim.kill()
                time.sleep(rng.uniform(0.0, 0.3))
                victim.start()
            if i == 100:
                nats_server.restart(kill=True)
        wanted = sorted(texts)
        sent = sender.project.box("sender", Box.SENT)
        retry_until(lambda: len(list(sent.iterdir())) == 200, timeout=180)
        boxes = [(hosts[1], "r1"), (hosts[1], "r2"), (hosts[2], "r3")]
        for host, role in boxes:
            got = host.project
            retry_until(
                lambda got=got, role=role: len(got.names(role, Box.NEW)) >= 200, timeout=180
            )
        for host, role in boxes:
            assert host.project.names(role, Box.NEW) == wanted  # one copy each, nothing else
            for name in wanted:
                copy = message.read(str(host.project.box(role, Box.NEW) / name))
                assert (copy.get("recipient"), copy.get("message")) == (role, texts[name])
        assert sorted(p.name for p in sent.iterdir()) == wanted
        assert sender.project.names("sender", Box.OUTBOX) == ["tmp"]
        assert sender.project.names("sender", Box.FAILED) == []
    finally:
        for host in hosts:
            host.stop()
    # Nothing waits on the server any more: every copy was acknowledged.
    from swarmforge.net.transport import Transport

    with Transport(nats_server.url, "x") as client:
        streams = client.call(client.js.streams_info(), "list streams")
        mail = [s for s in streams if s.config.name and s.config.name.startswith("SWARMFORGE-")]
        assert all(s.state.messages == 0 for s in mail if "hosts" not in s.config.name)


def test_status_json_of_a_host_lists_the_roles_of_the_other(hosts: tuple[Path, Path]) -> None:
    first, box_b = hosts
    assert sf("up", "--backend", "headless", cwd=first).returncode == 0
    assert sf("up", "--backend", "headless", "--host", "box-b", cwd=box_b).returncode == 0

    def seen_from(root: Path, role: str) -> dict[str, object] | None:
        state = json.loads(sf("status", "--json", cwd=root).stdout)
        found = [r for r in state["roles"] if r["role"] == role and r.get("reachable")]
        return found[0] if found else None

    retry_until(lambda: seen_from(first, "cleaner") is not None, timeout=30)
    retry_until(lambda: seen_from(box_b, "coder") is not None, timeout=30)
    cleaner, record_b = seen_from(first, "cleaner"), sessionrecord.load(str(box_b))
    assert cleaner is not None and record_b is not None
    assert (cleaner["host"], cleaner["port"]) == ("box-b", record_b.roles[0].port)
    text = sf("status", cwd=first).stdout
    assert "box-b" in text and "cleaner" in text
    # doctor leaves the other host's roles to that host: merge.sh lives in box-b's checkout.
    said = sf("doctor", cwd=first).stdout
    assert "runs on box-b: checked there" in said


# -- without a way across ---------------------------------------------------------------


def stranded_project(repo: Path, toml: str) -> Project:
    """qa here, cleaner on box-b (remote.tsv), coder sending to both."""
    project = Project(repo, {"coder": "task", "qa": "task"})
    with (repo / ".swarmforge" / "roles.tsv").open("a") as f:
        f.write(
            f"cleaner\tcleaner\t{repo}/.worktrees/cleaner\tswarmforge-cleaner\tC\tcodex\ttask\n"
        )
    (repo / ".swarmforge" / "remote.tsv").write_text("cleaner\tbox-b\n")
    (repo / "swarmforge").mkdir(exist_ok=True)
    (repo / "swarmforge" / "swarmforge.toml").write_text(toml)
    return project


def daemon_once(repo: Path, prelude: str = "") -> None:
    code = (
        f"{prelude}import sys; from swarmforge.cli import main; "
        f"sys.exit(main(['daemon', 'run', '--project', {str(repo)!r}, '--once', "
        "'--notify', 'none']))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_mail_for_another_host_waits_in_the_outbox_without_a_transport(repo: Path) -> None:
    project = stranded_project(repo, "")
    queued = queue_note(project, "coder", "qa,cleaner")
    daemon_once(repo)
    name = Path(queued).name
    assert project.names("qa", Box.NEW) == [name]  # the copy for this host is made
    assert name in project.names("coder", Box.OUTBOX)  # the original waits
    assert not (repo / ".worktrees" / "cleaner").exists()  # nothing made for box-b's role
    log = (repo / ".swarmforge" / "daemon" / "handoffd.log").read_text()
    assert "cleaner run on another host and no [transport] is set" in log


def test_a_transport_without_nats_py_is_one_clear_line_and_local_mail_still_flows(
    repo: Path,
) -> None:
    project = stranded_project(repo, '[transport]\nurl = "nats://127.0.0.1:1"\nproject = "p"\n')
    queued = queue_note(project, "coder", "qa,cleaner")
    daemon_once(repo, "import sys; sys.modules['nats'] = None; ")
    name = Path(queued).name
    assert project.names("qa", Box.NEW) == [name]
    assert name in project.names("coder", Box.OUTBOX)
    log = (repo / ".swarmforge" / "daemon" / "handoffd.log").read_text()
    assert "[transport] is set but nats-py is missing" in log


@pytest.mark.slow
def test_hosts_cut_off_from_the_server_for_a_while_catch_up(
    repo: Path, tmp_path: Path, nats_server: NatsServer
) -> None:
    hosts = three_hosts(tmp_path, repo, nats_server.url)
    sender = hosts[0]
    for host in hosts:
        host.start()
    try:
        first = queue_note(sender.project, "sender", "r1,r2,r3", "before", "d0")
        r3 = hosts[2].project
        retry_until(lambda: Path(first).name in r3.names("r3", Box.NEW), timeout=30)
        nats_server.stop()
        texts = {}
        for i in range(10):
            name = queue_note(sender.project, "sender", "r1,r2,r3", f"away {i}", f"d{i + 1}")
            texts[Path(name).name] = f"away {i}"
        time.sleep(15)  # the daemons try again and again meanwhile; nothing may be lost
        assert len(sender.project.names("sender", Box.OUTBOX)) == 11  # 10 items and tmp/
        nats_server.start()
        wanted = sorted([Path(first).name, *texts])
        for host, role in [(hosts[1], "r1"), (hosts[1], "r2"), (hosts[2], "r3")]:
            box = host.project.mailbox(role)
            # Queue items only: a copy still being written has a hidden temporary name.
            queued = lambda box=box: [Path(p).name for p in box.items(Box.NEW)]  # noqa: E731
            retry_until(lambda queued=queued: len(queued()) >= 11, timeout=60)
            assert queued() == wanted
        retry_until(lambda: len(sender.project.names("sender", Box.SENT)) == 11, timeout=30)
    finally:
        for host in hosts:
            host.stop()


# -- a real agent on the first host -----------------------------------------------------

CLAUDE_HANDS = (
    "echo hello > feature.txt && git add feature.txt && "
    "git -c user.name=coder -c user.email=coder@example.com commit -q -m feature && "
    "printf 'type: git_handoff\\nto: cleaner\\npriority: 50\\ntask: tidy\\ncommit: %s\\n' "
    '"$(git rev-parse --short=10 HEAD)" > .draft && swarm_handoff.sh .draft'
)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_claude_hands_a_commit_to_a_cleaner_on_another_host(
    repo: Path, tmp_path: Path, nats_server: NatsServer, live: LiveSwarm
) -> None:
    hub = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub))
    conf = (
        "window coder claude master --allowedTools Bash\n"
        "window cleaner exec cleaner task ./merge.sh\n"
    )
    make_swarm(repo, conf, {"merge.sh": MERGE}, prompts={"coder": "Code.\n"})
    (repo / "swarmforge" / "swarmforge.toml").write_text(settings_toml(nats_server.url, hub))
    commit_all(repo)
    git(repo, "push", "-q", str(hub), "main")
    box_b = tmp_path / "box-b"
    git(tmp_path, "clone", "-q", str(hub), str(box_b))
    live.first = [CLAUDE_HANDS]
    record = live.up()
    assert [r.name for r in record.roles] == ["coder"]
    try:
        up_b = sf("up", "--backend", "headless", "--host", "box-b", cwd=box_b)
        assert up_b.returncode == 0, up_b.stderr
        cleaner = role_tree(box_b, "cleaner")
        retry_until(lambda: len(completed(cleaner)) == 1, timeout=120)
        copy = message.read(str(completed(cleaner)[0]))
        assert (copy.get("from"), copy.get("merge_check")) == ("coder", "clean")
        assert (cleaner / "feature.txt").read_text() == "hello\n"
        assert git(cleaner, "log", "-1", "--format=%s", "HEAD") == "feature"  # fast-forward
    finally:
        sf("down", cwd=box_b)
