"""Mail across hosts: `[transport]` settings, the JetStream transport and the relay,
against a real nats-server (tests/natsserver.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmforge.config.settings import parse_settings
from swarmforge.config.transportsettings import TransportSettings
from swarmforge.doctor.transport import check_transport
from swarmforge.errors import CorruptFile
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.outbox import install
from tests.natsserver import NatsServer, nats_server, require_nats, running_server

__all__ = ["nats_server"]  # the fixture, used by name

NAME = "10_20260615T140531Z_000001_from_coder_to_cleaner.handoff"


def transport_toml(url: str, extra: str = "") -> bytes:
    return f'[transport]\nurl = "{url}"\nhub = "/srv/git/project.git"\n{extra}'.encode()


# -- without the extra ------------------------------------------------------------------


def test_the_daemon_and_doctor_import_without_nats() -> None:
    code = (
        "import sys; sys.modules['nats'] = None; "
        "import swarmforge.daemon.handoffd, swarmforge.doctor.report, swarmforge.cli; "
        "assert not any(m == 'nats' or m.startswith('nats.') for m in sys.modules "
        "if sys.modules[m] is not None)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- settings ---------------------------------------------------------------------------


def test_transport_and_host_are_read_from_swarmforge_toml() -> None:
    data = transport_toml("tls://nats.example.com:4222", 'credentials = "nats.creds"\n')
    data += b'[roles.cleaner]\nhost = "box-b"\n'
    settings = parse_settings(data, "swarmforge.toml")
    assert settings.transport == TransportSettings(
        url="tls://nats.example.com:4222", credentials="nats.creds", hub="/srv/git/project.git"
    )
    assert settings.role("cleaner").host == "box-b"
    assert settings.role("coder").host is None
    assert settings.transport.credentials_path("/p") == "/p/nats.creds"


def test_without_transport_the_swarm_stays_on_one_machine() -> None:
    assert parse_settings(b"", "swarmforge.toml").transport is None


@pytest.mark.parametrize(
    ("data", "key"),
    [
        (transport_toml("http://127.0.0.1:4222"), "transport.url"),
        (transport_toml("nats://127.0.0.1:99999"), "transport.url"),
        (transport_toml("nats://:4222"), "transport.url"),
        (transport_toml("nats://h", 'credentials = "/etc/nats.creds"\n'), "transport.credentials"),
        (transport_toml("nats://h", 'project = "a.b"\n'), "transport.project"),
        (b'[transport]\nurl = "nats://h"\n', "transport: "),
        (b'[transport]\nhub = "/x"\n', "transport.url"),
        (b'[roles.cleaner]\nhost = "box b"\n', "roles.cleaner.host"),
    ],
)
def test_a_bad_transport_value_names_the_file_and_key(data: bytes, key: str) -> None:
    with pytest.raises(CorruptFile) as caught:
        parse_settings(data, "/p/swarmforge/swarmforge.toml")
    assert caught.value.message.startswith(f"/p/swarmforge/swarmforge.toml: {key}")


def test_the_login_comes_from_the_environment_without_a_credentials_file() -> None:
    settings = TransportSettings(url="nats://h", hub="/x")
    env = {"SWARMFORGE_NATS_USER": "u", "SWARMFORGE_NATS_PASSWORD": "p"}
    assert settings.user_password(env) == ("u", "p")
    assert settings.user_password({}) is None
    with_file = TransportSettings(url="nats://h", hub="/x", credentials="nats.creds")
    assert with_file.user_password(env) is None


def test_every_host_names_the_project_alike_from_the_hub_or_the_project_setting() -> None:
    pytest.importorskip("nats")
    from swarmforge.net.subjects import consumer_name, project_id, subject, token

    one = project_id(TransportSettings(url="nats://a", hub="ssh://git@hub/p.git"))
    assert one == project_id(TransportSettings(url="nats://b", hub="ssh://git@hub/p.git/"))
    assert one != project_id(TransportSettings(url="nats://a", hub="ssh://git@hub/q.git"))
    assert project_id(TransportSettings(url="nats://a", hub="/x", project="shop")) == "shop"
    # A role name with subject wildcards gets a token of its own.
    assert token("qa-1") == "qa-1"
    assert token("a*") != token("a>") and "*" not in token("a*")
    assert subject("shop", "coder") == "swarmforge.shop.role.coder"
    assert consumer_name("shop", "coder") == "shop-coder"


# -- the transport, against a real server -----------------------------------------------


@pytest.fixture
def transport(nats_server: NatsServer) -> Iterator[object]:
    from swarmforge.net.transport import Transport

    client = Transport(nats_server.url, "proj")
    client.connect()
    client.ensure_stream()
    yield client
    client.close()


def test_the_stream_is_made_once_with_the_expected_config(transport: object) -> None:
    from swarmforge.net.mailstream import config_problems
    from swarmforge.net.transport import Transport

    assert isinstance(transport, Transport)
    info = transport.ensure_stream()  # a second time: unchanged
    assert config_problems(info.config, "proj") == []
    assert info.config.name == "SWARMFORGE-proj"


def test_a_publish_repeated_with_one_id_is_one_message(transport: object) -> None:
    from swarmforge.net.transport import Transport

    assert isinstance(transport, Transport)
    transport.publish("cleaner", "id1:cleaner", b"one")
    transport.publish("cleaner", "id1:cleaner", b"one")
    info = transport.stream_info()
    assert info is not None and info.state.messages == 1
    msgs = transport.consumer("cleaner").fetch(10, 0.5)
    assert [(m.data, m.msg_id) for m in msgs] == [(b"one", "id1:cleaner")]


def test_each_role_takes_only_its_own_mail(transport: object) -> None:
    from swarmforge.net.transport import Transport

    assert isinstance(transport, Transport)
    transport.publish("cleaner", "a:cleaner", b"c")
    transport.publish("q*", "a:q*", b"q")
    assert [m.data for m in transport.consumer("q*").fetch(10, 0.3)] == [b"q"]
    assert [m.data for m in transport.consumer("cleaner").fetch(10, 0.3)] == [b"c"]


def test_an_unreachable_server_is_one_clear_error() -> None:
    require_nats()
    from swarmforge.net.failure import TransportError
    from swarmforge.net.transport import Transport
    from tests.natsserver import free_port

    client = Transport(f"nats://127.0.0.1:{free_port()}", "proj")
    with pytest.raises(TransportError, match="connection refused"):
        client.connect()
    client.close()


def test_an_unacknowledged_message_survives_a_crash_of_the_server(
    nats_server: NatsServer,
) -> None:
    from swarmforge.net.transport import Transport

    with Transport(nats_server.url, "proj") as client:
        client.ensure_stream()
        client.publish("cleaner", "x:cleaner", b"kept")
    nats_server.restart(kill=True)
    with Transport(nats_server.url, "proj") as client:
        assert [m.data for m in client.consumer("cleaner").fetch(10, 1.0)] == [b"kept"]


# -- the relay --------------------------------------------------------------------------


def mailbox_in(worktree: Path) -> Mailbox:
    """The mailbox of a worktree, the worktree made first (a mailbox never makes one)."""
    worktree.mkdir(parents=True, exist_ok=True)
    return Mailbox(str(worktree))


def outbox_file(root: Path, handoff_id: str = "20260615T140531Z_000001_from_coder") -> str:
    handoff = message.Handoff(
        [("id", handoff_id), ("from", "coder"), ("to", "cleaner"), ("type", "note")],
        "please tidy up\n",
    )
    return install(mailbox_in(root / "sender"), NAME, handoff)


def visible(box: Mailbox, where: str) -> list[str]:
    return sorted(p.name for p in Path(box.path(where)).iterdir())


def test_a_sent_handoff_arrives_as_the_copy_local_delivery_would_make(
    transport: object, tmp_path: Path
) -> None:
    from swarmforge.net import incoming, outgoing
    from swarmforge.net.transport import Transport

    assert isinstance(transport, Transport)
    outgoing.send(transport, outbox_file(tmp_path), ["cleaner"])
    inbox = mailbox_in(tmp_path / "cleaner")
    got = incoming.receive(transport.consumer("cleaner"), inbox.worktree, timeout=0.5)
    assert got == [incoming.Received(NAME, incoming.DELIVERED)]
    assert visible(inbox, Box.NEW) == [NAME]  # no temporary file left beside it
    copy = message.read(inbox.path(Box.NEW, NAME))
    assert copy.get("recipient") == "cleaner" and copy.get("enqueued_at")
    assert copy.body == "please tidy up\n"
    info = transport.stream_info()
    assert info is not None and info.state.messages == 0  # acknowledged, so deleted


def test_a_message_redelivered_after_a_lost_ack_leaves_one_copy(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    from swarmforge.net import incoming, outgoing
    from swarmforge.net.transport import Transport

    inbox = mailbox_in(tmp_path / "cleaner")
    with Transport(nats_server.url, "proj") as client:
        client.ensure_stream()
        consumer = client.consumer("cleaner", ack_wait=0.5)
        path = outbox_file(tmp_path)
        outgoing.send(client, path, ["cleaner"])
        outgoing.send(client, path, ["cleaner"])  # a sender that died before archiving
        # A receiver that wrote the copy and died before its ack.
        [first] = consumer.fetch(10, 0.5)
        assert incoming.store("cleaner", inbox.worktree, first).status == incoming.DELIVERED
        # The server offers it again once ack_wait has passed: later on a loaded machine.
        got: list[incoming.Received] = []
        deadline = time.monotonic() + 15
        while not got and time.monotonic() < deadline:
            got = incoming.receive(consumer, inbox.worktree, timeout=1.0)
        assert got == [incoming.Received(NAME, incoming.DUPLICATE)]
        assert consumer.fetch(10, 0.7) == []  # acknowledged this time
    assert visible(inbox, Box.NEW) == [NAME]


@pytest.mark.slow
def test_a_fetch_that_finds_no_mail_returns_none_however_its_time_runs_out(
    nats_server: NatsServer,
) -> None:
    # nats-py ends an empty fetch with asyncio's TimeoutError instead of its own when the
    # server's end-of-request status comes just as the time runs out: about one fetch in
    # fifty of these short ones, which must read as no mail, not as a server that hangs.
    from swarmforge.net.transport import Transport

    with Transport(nats_server.url, "proj") as client:
        client.ensure_stream()
        consumer = client.consumer("cleaner")
        deadline = time.monotonic() + 10
        fetched = 0
        while time.monotonic() < deadline:
            for timeout in (0.002, 0.005, 0.01, 0.02, 0.05):
                assert consumer.fetch(10, timeout) == []
                fetched += 1
    assert fetched > 100


def test_a_copy_already_taken_by_its_role_is_not_made_again(
    transport: object, tmp_path: Path
) -> None:
    from swarmforge.net import incoming, outgoing
    from swarmforge.net.transport import Transport

    assert isinstance(transport, Transport)
    inbox = mailbox_in(tmp_path / "cleaner")
    path = outbox_file(tmp_path)
    outgoing.send(transport, path, ["cleaner"])
    consumer = transport.consumer("cleaner")
    incoming.receive(consumer, inbox.worktree, timeout=0.5)
    inbox.ensure(Box.COMPLETED)
    Path(inbox.path(Box.NEW, NAME)).rename(inbox.path(Box.COMPLETED, NAME))
    transport.publish("cleaner", "again:cleaner", fsread(path), {outgoing.NAME_HEADER: NAME})
    assert incoming.receive(consumer, inbox.worktree, timeout=0.5)[0].status == incoming.DUPLICATE
    assert visible(inbox, Box.NEW) == []


def fsread(path: str) -> bytes:
    return Path(path).read_bytes()


def test_a_different_handoff_under_a_taken_name_goes_to_failed(
    transport: object, tmp_path: Path
) -> None:
    from swarmforge.net import incoming, outgoing
    from swarmforge.net.transport import Transport

    assert isinstance(transport, Transport)
    inbox = mailbox_in(tmp_path / "cleaner")
    consumer = transport.consumer("cleaner")
    outgoing.send(transport, outbox_file(tmp_path), ["cleaner"])
    incoming.receive(consumer, inbox.worktree, timeout=0.5)
    other = outbox_file(tmp_path / "elsewhere", "20260615T140531Z_000001_from_other")
    outgoing.send(transport, other, ["cleaner"])
    [result] = incoming.receive(consumer, inbox.worktree, timeout=0.5)
    assert result.status == incoming.FAILED and "a different handoff" in result.reason
    assert visible(inbox, Box.FAILED) == [NAME, NAME + ".error"]
    assert visible(inbox, Box.OUTBOX_TMP) == []


def test_mail_without_a_handoff_file_name_is_set_aside(transport: object, tmp_path: Path) -> None:
    from swarmforge.net import incoming, outgoing
    from swarmforge.net.transport import Transport

    assert isinstance(transport, Transport)
    inbox = mailbox_in(tmp_path / "cleaner")
    transport.publish("cleaner", "odd:cleaner", b"id: x\n\nbody", {outgoing.NAME_HEADER: "../x"})
    [result] = incoming.receive(transport.consumer("cleaner"), inbox.worktree, timeout=0.5)
    assert result.status == incoming.FAILED and result.name.startswith("unnamed_")
    assert Path(inbox.path(Box.FAILED, result.name)).exists()


# -- doctor -----------------------------------------------------------------------------


def project_with(tmp_path: Path, data: bytes) -> str:
    root = tmp_path / "project"
    (root / "swarmforge").mkdir(parents=True)
    (root / "swarmforge" / "swarmforge.toml").write_bytes(data)
    return str(root)


def test_doctor_says_nothing_of_a_transport_that_is_not_set(tmp_path: Path) -> None:
    assert check_transport(project_with(tmp_path, b"")) is None


def test_doctor_finds_the_server_its_jetstream_and_the_stream(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    from swarmforge.net.subjects import project_id
    from swarmforge.net.transport import Transport

    root = project_with(tmp_path, transport_toml(nats_server.url))
    check = check_transport(root, {})
    assert check is not None and check.status == "warn" and "does not exist yet" in check.detail
    settings = TransportSettings(url=nats_server.url, hub="/srv/git/project.git")
    with Transport(nats_server.url, project_id(settings)) as client:
        client.ensure_stream()
    check = check_transport(root, {})
    assert check is not None and check.status == "ok", check


def test_doctor_says_in_one_line_that_the_server_is_unreachable(tmp_path: Path) -> None:
    require_nats()
    from tests.natsserver import free_port

    root = project_with(tmp_path, transport_toml(f"nats://127.0.0.1:{free_port()}"))
    check = check_transport(root, {})
    assert check is not None and check.status == "FAIL"
    assert "connection refused" in check.detail and "\n" not in check.detail


def test_doctor_says_in_one_line_that_the_password_is_wrong(tmp_path: Path) -> None:
    server = running_server(tmp_path, user="swarm", password="right")
    url = next(server).url
    try:
        root = project_with(tmp_path, transport_toml(url))
        env = {"SWARMFORGE_NATS_USER": "swarm", "SWARMFORGE_NATS_PASSWORD": "wrong"}
        check = check_transport(root, env)
        assert check is not None and check.status == "FAIL"
        assert "refused the login" in check.detail and "\n" not in check.detail
        env["SWARMFORGE_NATS_PASSWORD"] = "right"
        check = check_transport(root, env)
        assert check is not None and check.status == "warn", check  # no stream yet
    finally:
        server.close()
