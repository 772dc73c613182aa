"""Commits between hosts through the hub (swarmforge/net/hub.py), on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmforge.net import hub
from tests.natsserver import NatsServer, nats_server
from tests.support import git, make_template

__all__ = ["nats_server"]  # the fixture, used by name


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A sender's repository, a bare hub and a receiver's clone of it."""
    sender = make_template(tmp_path / "sender")
    hub_dir = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(hub_dir))
    git(sender, "push", "-q", str(hub_dir), "main")
    receiver = tmp_path / "receiver"
    git(tmp_path, "clone", "-q", str(hub_dir), str(receiver))
    return sender, hub_dir, receiver


def commit(repo: Path, text: str) -> str:
    (repo / "work.txt").write_text(text)
    git(repo, "add", "work.txt")
    git(repo, "commit", "-q", "-m", text)
    return git(repo, "rev-parse", "HEAD")


def test_a_pushed_commit_is_fetched_by_its_full_id_or_a_prefix(
    clones: tuple[Path, Path, Path],
) -> None:
    sender, hub_dir, receiver = clones
    first, second = commit(sender, "one"), commit(sender, "two")
    assert hub.push(str(sender), str(hub_dir), first[:10]) == first
    assert hub.push(str(sender), str(hub_dir), first) == first  # again: nothing changes
    hub.push(str(sender), str(hub_dir), second)
    assert hub.fetch(str(receiver), str(hub_dir), first)
    assert hub.fetch(str(receiver), str(hub_dir), second[:10])  # found through the listing
    assert git(receiver, "rev-parse", hub.ref(second)) == second
    # No remote was added on either side, and the receiver's branch did not move.
    assert git(sender, "remote") == "" and git(receiver, "remote") == "origin"
    assert git(receiver, "log", "-1", "--format=%s") == "init"


def test_a_commit_the_hub_lacks_is_not_found_and_never_guessed(
    clones: tuple[Path, Path, Path],
) -> None:
    sender, hub_dir, receiver = clones
    unknown = commit(sender, "never pushed")
    assert hub.fetch(str(receiver), str(hub_dir), unknown) is False
    assert hub.fetch(str(receiver), str(hub_dir), unknown[:10]) is False
    # A prefix that names several pushed commits (here: every one) is not fetched.
    hub.push(str(sender), str(hub_dir), commit(sender, "a"))
    hub.push(str(sender), str(hub_dir), commit(sender, "b"))
    assert hub.fetch(str(receiver), str(hub_dir), "") is False


def test_a_commit_missing_from_the_sender_is_one_clear_error(
    clones: tuple[Path, Path, Path],
) -> None:
    sender, hub_dir, _ = clones
    with pytest.raises(hub.HubError, match="commit 0123456789 is not in"):
        hub.push(str(sender), str(hub_dir), "0123456789")


def test_an_unreachable_hub_is_one_clear_error(
    clones: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    sender, _, receiver = clones
    gone = str(tmp_path / "no-such-hub.git")
    head = git(sender, "rev-parse", "HEAD")
    with pytest.raises(hub.HubError, match="cannot push to") as pushed:
        hub.push(str(sender), gone, head)
    assert "\n" not in pushed.value.message
    new = commit(sender, "not in the receiver")
    with pytest.raises(hub.HubError, match="cannot list the commits of"):
        hub.fetch(str(receiver), gone, new)


def test_a_git_handoff_waits_while_the_hub_cannot_be_reached(
    clones: tuple[Path, Path, Path], tmp_path: Path, nats_server: NatsServer
) -> None:
    from swarmforge.handoff import message
    from swarmforge.handoff.mailbox import Box, Mailbox
    from swarmforge.handoff.outbox import install
    from swarmforge.net import incoming, outgoing
    from swarmforge.net.transport import Transport

    sender, hub_dir, receiver = clones
    short = commit(sender, "for the cleaner")[:10]
    name = "50_20260615T140531Z_000001_from_coder_to_cleaner.handoff"
    handoff = message.Handoff(
        [
            ("id", "20260615T140531Z_000001_from_coder"),
            ("from", "coder"),
            ("to", "cleaner"),
            ("type", "git_handoff"),
            ("task", "tidy"),
            ("commit", short),
        ],
        f"merge_and_process coder {short}\n",
    )
    path = install(Mailbox(str(sender)), name, handoff)
    with Transport(nats_server.url, "p") as client:
        client.ensure_stream()
        outgoing.send(client, path, ["cleaner"], hub=str(hub_dir))
        consumer = client.consumer("cleaner")
        [msg] = consumer.fetch(1, 1.0)
        held = incoming.store("cleaner", str(receiver), msg, str(tmp_path / "gone.git"))
        assert held.status == incoming.HELD and "cannot" in held.reason
        assert not Path(Mailbox(str(receiver)).path(Box.NEW, name)).exists()
        got = incoming.store("cleaner", str(receiver), msg, str(hub_dir))
        assert got.status == incoming.DELIVERED
        copy = message.read(Mailbox(str(receiver)).path(Box.NEW, name))
        assert copy.get("merge_check") == "clean"
