"""Everything the README shows is run or checked here, so the README cannot drift."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from swarmforge.config.conf import parse_config
from swarmforge.config.settings import parse_settings
from swarmforge.handoff import draft
from swarmforge.rehearse.script import parse_script
from swarmforge.run.specfile import parse_spec

README = Path(__file__).resolve().parents[1] / "README.md"
VENV = Path(sys.executable).parent.parent
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def blocks(lang: str) -> list[str]:
    return [text for kind, text in BLOCK.findall(README.read_text()) if kind == lang]


def test_the_first_block_is_the_two_setup_commands() -> None:
    first = BLOCK.findall(README.read_text())[0]
    assert first[0] == "sh" and len(first[1].strip().splitlines()) == 2


@pytest.mark.slow
def test_every_shell_block_after_setup_runs(tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(VENV)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    for script in blocks("sh")[1:]:
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, f"{script}\n{result.stdout}\n{result.stderr}"
    assert (tmp_path / "my-project" / "swarmforge" / "swarmforge.conf").exists()


def test_configuration_examples_parse() -> None:
    for text in blocks("conf"):
        assert parse_config(text, "README.md").roles
    for text in blocks("toml"):
        assert parse_spec(tomllib.loads(text), "README.md").tasks


def test_settings_and_rehearsal_examples_parse() -> None:
    assert blocks("settings") and blocks("rehearsal")
    for text in blocks("settings"):
        assert parse_settings(text.encode(), "README.md").roles
    for text in blocks("rehearsal"):
        assert parse_script(text.encode(), "README.md").roles


def test_draft_examples_pass_the_gate_rules() -> None:
    asked: list[str] = []

    def resolve(commit: str) -> tuple[str | None, str | None]:
        asked.append(commit)  # no repository here: the example's commit is taken as it is
        return commit, None

    for text in blocks("draft"):
        valid, errors = draft.validate(text.encode(), frozenset({"cleaner"}), resolve)
        assert errors == [] and valid is not None
    assert asked


def commands() -> list[list[str]]:
    out = []
    for text in blocks("text"):
        for line in text.splitlines():
            words = line.split("#")[0].split()
            if words[:1] == ["swarmforge"]:
                path = []
                for word in words[1:]:
                    if not re.fullmatch(r"[a-z][a-z-]*", word):
                        break
                    path.append(word)
                out.append(["swarmforge", *path])
            elif words[:2] and words[0].endswith("bin/python") and words[1].startswith("bench/"):
                out.append(["python", words[1]])
    return out


@pytest.mark.parametrize("command", commands(), ids=" ".join)
def test_every_command_synopsis_exists(command: list[str]) -> None:
    if command[0] == "swarmforge":
        argv = [str(VENV / "bin" / "swarmforge"), *command[1:], "--help"]
    else:
        argv = [sys.executable, str(README.parent / command[1]), "--help"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
