"""`swarmforge trust` and the agent checks of `doctor`: the agents' own files, edited minimally.

Every test points HOME (and CLAUDE_CONFIG_DIR / CODEX_HOME where it matters) at a
temporary directory: the real agent files of this machine are never read or written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarmforge.agents import trust
from swarmforge.agents.claude.trust import claude_config_path
from swarmforge.agents.codex.trust import Provider, codex_config_path
from swarmforge.agents.seed import seed_home
from swarmforge.errors import SwarmforgeError
from swarmforge.rehearse.agentenv import CLAUDE_OFFLINE
from tests.realagents import require_cli
from tests.support import SWARMFORGE, VENV_BIN, git, retry_until

CONF = "window coder codex master\nwindow reviewer claude reviewer\n"
API_KEY = "sk-ant-test-0000000000-abcdefghijklmnopqrst"
# claude as written by `JSON.stringify(obj, null, 2)`: other projects, other keys, no final newline.
CLAUDE_JSON = {
    "numStartups": 7,
    "hasCompletedOnboarding": True,
    "projects": {
        "/elsewhere/one": {"allowedTools": ["Bash(ls)"], "hasTrustDialogAccepted": True},
        "/elsewhere/two": {"hasTrustDialogAccepted": False, "lastCost": 0.125},
    },
    "userID": "caf\u00e9-\u2603",
    "tipsHistory": {},
}
CODEX_TOML = """\
# my codex settings
model = "o3"  # the one I like

[features]
daemon_auto_start = false

[projects."/elsewhere/one"]
trust_level = "trusted"

[tui]
# keep this comment
notifications = true
"""


def sf(
    *args: str, cwd: Path, home: Path, extra: dict[str, str] | None = None, stdin: int | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `swarmforge` with HOME at `home` and nothing else of this machine's environment."""
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(home), **(extra or {})}
    # Test infrastructure only: lets coverage follow the command into its interpreter.
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    return subprocess.run(
        [SWARMFORGE, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL if stdin is None else stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def agent_checks(r: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    """The claude and codex checks of `doctor --json`."""
    return {c["check"]: c for c in json.loads(r.stdout) if c["check"] in ("claude", "codex")}


@pytest.fixture
def root(repo: Path) -> Path:
    """A project whose swarm uses codex and claude."""
    (repo / "swarmforge").mkdir()
    (repo / "swarmforge" / "swarmforge.conf").write_text(CONF)
    return repo


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with claude onboarded and codex logged in, neither trusting the project."""
    path = tmp_path / "home"
    (path / ".codex").mkdir(parents=True)
    (path / ".claude.json").write_text(json.dumps(CLAUDE_JSON, indent=2, ensure_ascii=False))
    (path / ".codex" / "config.toml").write_text(CODEX_TOML)
    (path / ".codex" / "auth.json").write_text('{"auth_mode": "apikey", "OPENAI_API_KEY": "k"}')
    return path


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_doctor_reports_an_untrusted_project_and_trust_fixes_only_that(
    root: Path, home: Path
) -> None:
    claude_before = (home / ".claude.json").read_bytes()
    found = agent_checks(sf("doctor", "--json", cwd=root, home=home))
    assert found["claude"]["status"] == found["codex"]["status"] == "FAIL"
    assert f"{root} is not trusted" in found["claude"]["detail"]
    assert "swarmforge trust --agent claude" in found["claude"]["fix"]
    assert "swarmforge trust --agent codex" in found["codex"]["fix"]
    assert "login" not in found["codex"]["detail"]

    r = sf("trust", "--yes", cwd=root, home=home)
    assert r.returncode == 0, r.stderr
    assert (
        f'+[projects."{root}"]' in r.stdout and '+      "hasTrustDialogAccepted": true' in r.stdout
    )

    # claude: the new entry is the only difference, byte for byte.
    entry = f',\n    "{root}": {{\n      "hasTrustDialogAccepted": true\n    }}'
    claude_after = (home / ".claude.json").read_text()
    assert claude_after.count(entry) == 1
    assert claude_after.replace(entry, "").encode() == claude_before
    # codex: the user's file, comments and all, then the new table.
    added = f'\n[projects."{root}"]\ntrust_level = "trusted"\n'
    assert (home / ".codex" / "config.toml").read_text() == CODEX_TOML + added
    assert (home / ".codex" / "auth.json").read_text().startswith('{"auth_mode"')

    r = sf("doctor", "--json", cwd=root, home=home)
    assert {c["status"] for c in agent_checks(r).values()} == {"ok"}
    again = sf("trust", "--yes", cwd=root, home=home)
    assert again.returncode == 0 and "nothing to change" in again.stdout


def test_without_a_terminal_or_yes_nothing_is_written(root: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-home"
    empty.mkdir()
    r = sf("trust", cwd=root, home=empty)
    assert r.returncode == 2
    assert "--yes" in r.stderr and "Traceback" not in r.stderr
    assert "+trust_level = " in r.stdout  # the change was shown
    assert list(empty.iterdir()) == []
    r = sf("trust", "--json", "--agent", "codex", cwd=root, home=empty)
    assert r.returncode == 2 and json.loads(r.stdout)["applied"] is False
    assert list(empty.iterdir()) == []


def test_the_answer_on_a_terminal_decides(root: Path, home: Path) -> None:
    before = snapshot(home)
    for answer, code in (("n\n", 1), ("y\n", 0)):
        main, terminal = os.openpty()
        try:
            os.write(main, answer.encode())
            r = sf("trust", "--agent", "codex", cwd=root, home=home, stdin=terminal)
        finally:
            os.close(main)
            os.close(terminal)
        assert r.returncode == code, r.stderr
        assert "Apply these changes? [y/N]" in r.stdout
        if answer == "n\n":
            assert "nothing written" in r.stdout and snapshot(home) == before
    assert f'[projects."{root}"]' in (home / ".codex" / "config.toml").read_text()
    assert (home / ".claude.json").read_bytes() == before[str(home / ".claude.json")]


def test_trust_creates_missing_files_with_only_the_entries_needed(
    root: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "new-home"
    r = sf("trust", "--yes", "--json", cwd=root, home=empty, extra={"ANTHROPIC_API_KEY": API_KEY})
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["applied"] is True and {c["agent"] for c in report["changes"]} == {
        "claude",
        "codex",
    }
    assert {b["fix"] for b in report["remaining"]} == {"claude", "codex login"}
    claude = json.loads((empty / ".claude.json").read_text())
    assert claude == {
        "projects": {str(root): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
    }
    codex = empty / ".codex" / "config.toml"
    assert codex.read_text() == f'[projects."{root}"]\ntrust_level = "trusted"\n'
    assert codex.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        (".claude.json", '{\n  "projects": {\n    "/a": tru\n}', "line 3"),
        (".codex/config.toml", '[features]\nx = "unterminated\n', "line 2"),
    ],
)
def test_a_corrupt_file_is_named_and_left_alone(
    root: Path, home: Path, name: str, text: str, where: str
) -> None:
    (home / name).write_text(text)
    r = sf("trust", "--yes", cwd=root, home=home)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{home / name}, {where}: not valid" in r.stderr and "by hand" in r.stderr
    assert (home / name).read_text() == text
    agent = "claude" if name == ".claude.json" else "codex"
    check = agent_checks(sf("doctor", "--json", cwd=root, home=home))[agent]
    assert check["status"] == "FAIL" and str(home / name) in check["detail"]


@pytest.mark.parametrize("name", [".claude.json", ".codex/config.toml"])
def test_an_agent_file_that_is_a_fifo_is_one_clear_error_and_never_waited_on(
    root: Path, home: Path, name: str
) -> None:
    fifo = home / name
    fifo.unlink()
    os.mkfifo(fifo)
    r = sf("trust", "--yes", cwd=root, home=home)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{fifo}: not a regular file (a FIFO)\n")
    assert "nothing was written" in r.stderr and fifo.is_fifo()
    agent = "claude" if name == ".claude.json" else "codex"
    check = agent_checks(sf("doctor", "--json", cwd=root, home=home))[agent]
    assert check["status"] == "FAIL"
    assert check["detail"] == f"would not start unattended: {fifo}: not a regular file (a FIFO)"
    assert check["fix"] == f"run `rm {fifo}`"


def test_trust_without_a_config_needs_the_agent_named(tmp_path: Path, home: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    r = sf("trust", "--yes", cwd=bare, home=home)
    assert r.returncode == 1 and "--agent" in r.stderr
    r = sf("trust", "--yes", "--agent", "codex", cwd=bare, home=home)
    assert r.returncode == 0 and f'[projects."{bare}"]' in r.stdout


def test_an_existing_codex_entry_changes_in_one_line(tmp_path: Path) -> None:
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    config = codex_home / "config.toml"
    project = tmp_path / "p"
    project.mkdir()
    text = (
        f"# top\n[projects.'{project}']  # mine\n"
        "trust_level = 'untrusted' # said no\nother = 1\n\n[tui]\nx = 1\n"
    )
    config.write_text(text)
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(codex_home)}
    change = trust.plan_trust("codex", str(project), env)
    assert change is not None
    trust.apply(change)
    expected = text.replace("trust_level = 'untrusted'", 'trust_level = "trusted"')
    assert config.read_text() == expected
    assert trust.plan_trust("codex", str(project), env) is None
    # A table without the key gets the one line it lacks.
    config.write_text(f'[projects."{project}"]\nother = 1\n')
    trust.apply(trust.plan_trust("codex", str(project), env) or change)
    assert config.read_text() == f'[projects."{project}"]\ntrust_level = "trusted"\nother = 1\n'
    # An inline table cannot be changed line by line: refused, nothing written.
    inline = f'projects = {{ "{project}" = {{ trust_level = "untrusted" }} }}\n'
    config.write_text(inline)
    with pytest.raises(SwarmforgeError, match=r"by hand|cannot change") as caught:
        trust.plan_trust("codex", str(project), env)
    assert str(config) in caught.value.message and config.read_text() == inline


def test_claude_json_not_in_claudes_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    path.write_text('{"hasCompletedOnboarding":true}')
    env = {"HOME": str(tmp_path)}
    with pytest.raises(SwarmforgeError) as caught:
        trust.plan_trust("claude", str(tmp_path), env)
    assert str(path) in caught.value.message and caught.value.hint
    # A file ending in a newline, or indented by four, keeps its layout.
    path.write_text('{\n    "hasCompletedOnboarding": true\n}\n')
    change = trust.plan_trust("claude", str(tmp_path), env)
    assert change is not None
    assert change.new.decode().startswith('{\n    "hasCompletedOnboarding": true,\n    "projects"')
    assert change.new.endswith(b"}\n")


def test_apply_refuses_a_file_changed_since_the_plan_and_keeps_mode_and_link(
    tmp_path: Path,
) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text("{}")
    real.chmod(0o640)
    (tmp_path / ".claude.json").symlink_to(real)
    env = {"HOME": str(tmp_path)}
    change = trust.plan_trust("claude", str(tmp_path), env)
    assert change is not None
    real.write_text("{}\n")
    with pytest.raises(SwarmforgeError, match="changed since"):
        trust.apply(change)
    assert real.read_text() == "{}\n"
    change = trust.plan_trust("claude", str(tmp_path), env)
    assert change is not None
    trust.apply(change)
    assert (tmp_path / ".claude.json").is_symlink()
    assert json.loads(real.read_text())["projects"] == {
        str(tmp_path): {"hasTrustDialogAccepted": True}
    }
    assert real.stat().st_mode & 0o777 == 0o640


def test_an_api_key_must_be_approved_and_trust_approves_it(tmp_path: Path) -> None:
    doc = {
        "hasCompletedOnboarding": True,
        "projects": {str(tmp_path): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [], "rejected": [API_KEY[-20:], "other"]},
    }
    (tmp_path / ".claude.json").write_text(json.dumps(doc, indent=2))
    env = {"HOME": str(tmp_path)}
    assert trust.blockers("claude", str(tmp_path), env) == []
    env["ANTHROPIC_API_KEY"] = API_KEY
    (found,) = trust.blockers("claude", str(tmp_path), env)
    assert "ANTHROPIC_API_KEY" in found.problem and found.fix == "swarmforge trust --agent claude"
    change = trust.plan_trust("claude", str(tmp_path), env)
    assert change is not None
    trust.apply(change)
    responses = json.loads((tmp_path / ".claude.json").read_text())["customApiKeyResponses"]
    assert responses == {"approved": [API_KEY[-20:]], "rejected": ["other"]}
    assert trust.blockers("claude", str(tmp_path), env) == []


def test_where_the_agents_keep_their_files(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert claude_config_path(env) == str(tmp_path / ".claude.json")
    assert codex_config_path(env) == str(tmp_path / ".codex" / "config.toml")
    env |= {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "CODEX_HOME": str(tmp_path / "cx")}
    assert claude_config_path(env) == str(tmp_path / "cc" / ".claude.json")
    assert codex_config_path(env) == str(tmp_path / "cx" / "config.toml")
    # A non-empty legacy .config.json wins.
    (tmp_path / "cc").mkdir()
    (tmp_path / "cc" / ".config.json").write_text("")
    assert claude_config_path(env) == str(tmp_path / "cc" / ".claude.json")
    (tmp_path / "cc" / ".config.json").write_text("{}")
    assert claude_config_path(env) == str(tmp_path / "cc" / ".config.json")
    # codex refuses to start when CODEX_HOME names no directory.
    (found,) = trust.blockers("codex", str(tmp_path), env)
    assert "CODEX_HOME" in found.problem and found.fix.startswith("mkdir -p ")


def test_codex_needs_a_provider_it_can_use(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    trusted = f'[projects."{project}"]\ntrust_level = "trusted"\n'
    env = {"HOME": str(tmp_path)}

    def fixes(text: str, **extra: str) -> list[str]:
        config.write_text(text + trusted)
        return [b.fix for b in trust.blockers("codex", str(project), {**env, **extra})]

    assert fixes("") == ["codex login"]
    assert fixes("", OPENAI_API_KEY="k") == ["printenv OPENAI_API_KEY | codex login --with-api-key"]
    local = 'model_provider = "mine"\n[model_providers.mine]\nbase_url = "http://x"\n'
    assert fixes(local) == []
    keyed = local + 'env_key = "MINE_KEY"\n'
    assert fixes(keyed) == ["export MINE_KEY=<key>"]
    assert fixes(keyed, MINE_KEY="k") == []
    assert fixes('model_provider = "ollama"\n') == []
    assert fixes('model_provider = "nowhere"\n')[0].endswith(str(config))
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    assert fixes("") == []


def test_seed_home_refuses_to_replace_a_file(tmp_path: Path) -> None:
    seeded = seed_home(str(tmp_path / "h"), str(tmp_path), api_key=API_KEY)
    assert seeded.env()["CODEX_HOME"] == str(tmp_path / "h" / ".codex")
    auth = json.loads((tmp_path / "h" / ".codex" / "auth.json").read_text())
    assert auth["OPENAI_API_KEY"] == API_KEY
    with pytest.raises(SwarmforgeError, match="exists"):
        seed_home(str(tmp_path / "h"), str(tmp_path))


# The real agents, started in a private tmux server: no question may stand in the way.

DIALOGS = (
    "trust this folder",  # both agents' folder trust screens
    "one you trust",
    "use this API key",
    "Sign in",  # codex without a provider
    "Welcome to Claude Code",  # claude's first run
    "Choose the text style",
    "Unable to connect",  # claude's onboarding offline
    "EXIT=",  # the agent ended
)


def dead_url() -> str:
    """A loopback address where nothing listens: model requests fail at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def ready(agent: str, pane: str) -> bool:
    """The agent shows its input prompt (and no dialog over it)."""
    if agent == "claude":
        prompt = "\u276f"  # claude's empty input line
        return "Claude Code v" in pane and any(line.strip() == prompt for line in pane.splitlines())
    # codex draws its prompt before it decides on trust; "for agents" joins the footer once
    # its session is configured, after any trust screen would have been shown.
    return "OpenAI Codex (v" in pane and "for agents" in pane


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[list[str]]:
    """A private tmux server; everything started under `tmp_path` is ended afterwards."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    name = f"sf-trust-{uuid.uuid4().hex[:8]}"
    command = ["tmux", "-L", name, "-f", "/dev/null"]
    yield command
    subprocess.run([*command, "kill-server"], capture_output=True)
    # The server may leave its socket behind when killed.
    sockets = Path(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}")
    (sockets / name).unlink(missing_ok=True)
    mine = str(tmp_path)
    for process in psutil.process_iter(["cmdline"]):
        if any(mine in arg for arg in process.info["cmdline"] or ()):
            with contextlib.suppress(psutil.Error):
                process.kill()


def start(tmux: list[str], agent: str, cwd: Path, env: dict[str, str]) -> str:
    """Start the real `agent` TUI in `cwd`; the pane once it is ready or blocked."""
    exe = require_cli(agent)
    argv = ["env", "-i", f"PATH={VENV_BIN}:/usr/bin:/bin", "TERM=xterm-256color"]
    argv += [f"{k}={v}" for k, v in env.items()]
    script = '"$@"; echo EXIT=$?; sleep 60'
    session = ["new-session", "-d", "-s", agent, "-x", "150", "-y", "45", "-c", str(cwd)]
    subprocess.run([*tmux, *session, *argv, "sh", "-c", script, "sh", exe], check=True)
    seen: list[str] = []

    def settled() -> bool:
        capture = [*tmux, "capture-pane", "-p", "-t", agent]
        seen[:] = [subprocess.run(capture, capture_output=True, text=True).stdout]
        return ready(agent, seen[0]) or any(d.lower() in seen[0].lower() for d in DIALOGS)

    retry_until(settled, timeout=15)
    return seen[0]


def agent_env(agent: str, home: Path) -> dict[str, str]:
    if agent == "claude":
        url = dead_url()
        return {"HOME": str(home), "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": url}
    return {"HOME": str(home), "SF_TEST_MODEL_KEY": "k"}


def worktree(root: Path) -> Path:
    """A role's linked worktree under .worktrees/: covered by the root's entry."""
    path = root / ".worktrees" / "reviewer"
    git(root, "worktree", "add", "-q", "-b", "swarm/test/reviewer", str(path))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_seeded_home_starts_the_real_agent_without_a_question(
    agent: str, root: Path, tmp_path: Path, tmux: list[str]
) -> None:
    provider = Provider(base_url=dead_url() + "/v1", env_key="SF_TEST_MODEL_KEY")
    seeded = seed_home(str(tmp_path / "home"), str(root), api_key=API_KEY, codex_provider=provider)
    env = {**agent_env(agent, tmp_path / "home"), **seeded.env(), **CLAUDE_OFFLINE}
    pane = start(tmux, agent, worktree(root), env)
    assert ready(agent, pane), pane
    assert not any(d.lower() in pane.lower() for d in DIALOGS), pane


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_home_made_by_trust_starts_the_real_agent_without_a_question(
    agent: str, root: Path, tmp_path: Path, tmux: list[str]
) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    # The user's own codex settings (with the managed daemon off: tests leave no daemon behind).
    (home / ".codex" / "config.toml").write_text(CODEX_TOML)
    r = sf("trust", "--yes", cwd=root, home=home, extra={"ANTHROPIC_API_KEY": API_KEY})
    assert r.returncode == 0, r.stderr
    # What trust leaves to the user: claude's first run, and a codex login (the fix doctor names).
    claude = json.loads((home / ".claude.json").read_text())
    (home / ".claude.json").write_text(json.dumps({**claude, "hasCompletedOnboarding": True}))
    login = [require_cli("codex"), "login", "--with-api-key"]
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(home)}
    subprocess.run(login, input="sk-test", env=env, text=True, check=True, capture_output=True)
    assert {
        c["status"] for c in agent_checks(sf("doctor", "--json", cwd=root, home=home)).values()
    } == {"ok"}
    pane = start(tmux, agent, worktree(root), {**agent_env(agent, home), **CLAUDE_OFFLINE})
    assert ready(agent, pane), pane
    assert not any(d.lower() in pane.lower() for d in DIALOGS), pane


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_without_trust_the_real_agent_asks(
    agent: str, root: Path, home: Path, tmux: list[str]
) -> None:
    """The control for the two tests above: the same start, in a home that lacks the trust."""
    pane = start(tmux, agent, worktree(root), {**agent_env(agent, home), **CLAUDE_OFFLINE})
    assert "trust" in pane.lower() and not ready(agent, pane), pane
