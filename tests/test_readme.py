"""Everything the README shows is run or checked here, so the README cannot drift."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
VENV = Path(sys.executable).parent.parent
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def blocks(lang: str) -> list[str]:
    return [text for kind, text in BLOCK.findall(README.read_text()) if kind == lang]


def test_the_first_shell_block_is_the_two_setup_commands() -> None:
    # .ci/run runs the first ```sh block verbatim: it must stay exactly the set-up.
    assert blocks("sh")[0].splitlines() == [
        "./setup.sh",
        '.venv/bin/python -m pytest -m "slow or not slow" -n 4 --cov',
    ]


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
    return out


def test_the_readme_shows_a_first_swarm() -> None:
    shown = {" ".join(command) for command in commands()}
    assert {"swarmforge up", "swarmforge status", "swarmforge down"} <= shown


@pytest.mark.parametrize("command", commands(), ids=" ".join)
def test_every_command_synopsis_exists(command: list[str]) -> None:
    argv = [str(VENV / "bin" / "swarmforge"), *command[1:], "--help"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
