"""A committed `[transport]` is outside input: a hub that git would read as an option or
as a command runs nothing, and a password in the NATS URL is never shown or logged."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from swarmforge import logfile
from swarmforge.config.settings import load_settings
from swarmforge.errors import CorruptFile
from swarmforge.net import hub
from swarmforge.text import shown_url
from tests.natsserver import free_port
from tests.support import commit_all, git, make_swarm, retry_until
from tests.support import run_cli as sf

PASSWORD = "s3cret-pw"
CONF = "window coder exec coder task ./work.sh\n"


def write_settings(root: Path, url: str, hub_value: str) -> None:
    (root / "swarmforge").mkdir(exist_ok=True)
    settings = f'[transport]\nurl = "{url}"\nhub = "{hub_value}"\n'
    (root / "swarmforge" / "swarmforge.toml").write_text(settings)


def nothing_made(top: Path) -> bool:
    return not any(p.name == "PWN" for p in top.rglob("*"))


def test_a_committed_hub_read_as_an_option_runs_nothing_in_a_fresh_clone(
    repo: Path, tmp_path: Path
) -> None:
    write_settings(repo, f"nats://127.0.0.1:{free_port()}", "--upload-pack=touch PWN;")
    commit_all(repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    r = sf("doctor", cwd=clone)
    assert r.returncode == 1
    assert nothing_made(tmp_path)
    said = [line for line in (r.stdout + r.stderr).splitlines() if "upload-pack" in line]
    assert len(said) == 1, r.stdout + r.stderr
    assert "transport.hub" in said[0] and "starts with '-'" in said[0]
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.parametrize("key", ["hub", "url"])
def test_a_hub_or_url_that_starts_with_a_dash_is_refused_naming_the_setting(
    repo: Path, key: str
) -> None:
    values = {"url": "nats://127.0.0.1:4222", "hub": "/srv/git/project.git"}
    values[key] = "--upload-pack=touch PWN;"
    write_settings(repo, values["url"], values["hub"])
    with pytest.raises(CorruptFile) as caught:
        load_settings(str(repo))
    assert f"transport.{key}" in caught.value.message
    assert "starts with '-'" in caught.value.message


@pytest.mark.parametrize("allowed", ["protocol.allow", "protocol.ext.allow"])
def test_an_ext_hub_runs_no_command_even_where_git_would_allow_it(
    repo: Path, tmp_path: Path, allowed: str
) -> None:
    git(repo, "config", allowed, "always")  # a user whose git allows every transport
    command_hub = "ext::sh -c touch% PWN"
    with pytest.raises(hub.HubError):
        hub.push(str(repo), command_hub, git(repo, "rev-parse", "HEAD"))
    with pytest.raises(hub.HubError):
        hub.fetch(str(repo), command_hub, "1" * 40)  # fetch by ref, then ls-remote
    with pytest.raises(hub.HubError):
        hub.fetch(str(repo), command_hub, "1234567")  # ls-remote straight away
    assert nothing_made(tmp_path)


def test_a_hub_whose_url_holds_a_password_is_named_without_it(repo: Path) -> None:
    with pytest.raises(hub.HubError) as caught:
        url = f"https://user:{PASSWORD}@127.0.0.1:{free_port()}/x.git"
        hub.push(str(repo), url, git(repo, "rev-parse", "HEAD"))
    assert PASSWORD not in caught.value.message
    assert "https://user:***@127.0.0.1:" in caught.value.message


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("nats://user:pw@127.0.0.1:4222", "nats://user:***@127.0.0.1:4222"),
        ("nats://token@127.0.0.1:4222", "nats://***@127.0.0.1:4222"),
        ("https://user:pw@git.example/a@b.git", "https://user:***@git.example/a@b.git"),
        ("tls://nats.example:4222", "tls://nats.example:4222"),
        ("ssh://git@git.example/shop.git", "ssh://git@git.example/shop.git"),
        ("git@git.example:shop.git", "git@git.example:shop.git"),
        ("/srv/git/project.git", "/srv/git/project.git"),
    ],
)
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert shown_url(url) == shown


@pytest.fixture
def secret_project(repo: Path, tmp_path: Path) -> Path:
    """A swarm whose NATS URL holds a password, with no server listening there."""
    bare = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    write_settings(repo, f"nats://user:{PASSWORD}@127.0.0.1:{free_port()}", str(bare))
    return make_swarm(repo, CONF, {"work.sh": "#!/bin/sh\ncat > /dev/null\n"})


def test_doctor_and_status_never_show_the_password_of_the_nats_url(secret_project: Path) -> None:
    for command in (("doctor",), ("doctor", "--json"), ("status",), ("status", "--json")):
        r = sf(*command, cwd=secret_project)
        said = r.stdout + r.stderr
        assert PASSWORD not in said, command
        assert "user:***@127.0.0.1" in said, (command, said)


def test_the_daemon_log_never_holds_the_password_and_only_its_owner_reads_it(
    secret_project: Path,
) -> None:
    log = secret_project / ".swarmforge" / "daemon" / "handoffd.log"
    project = str(secret_project)
    r = sf("daemon", "start", "--project", project, "--notify", "none", cwd=secret_project)
    assert r.returncode == 0, r.stderr
    try:
        retry_until(lambda: log.is_file() and "cannot connect to" in log.read_text())
    finally:
        assert sf("daemon", "stop", "--project", project, cwd=secret_project).returncode == 0
    text = log.read_text()
    assert PASSWORD not in text and "user:***@127.0.0.1" in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_log_file_is_made_owner_only_and_an_open_one_narrowed(tmp_path: Path) -> None:
    made, older = tmp_path / "made.log", tmp_path / "older.log"
    older.write_text("old\n")
    older.chmod(0o644)
    for path in (made, older):
        log = logfile.logger(f"test-log:{path}", str(path))
        try:
            log.info("a line")
        finally:
            for handler in list(log.handlers):
                handler.close()
                log.removeHandler(handler)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert "a line" in path.read_text()
    assert older.read_text().startswith("old\n")
