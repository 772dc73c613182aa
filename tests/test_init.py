"""`swarmforge init`: a project's swarmforge/ scaffolded from a shipped pack, never clobbered."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from swarmforge.config import scaffold
from swarmforge.config.conf import load_config, parse_config
from swarmforge.config.prompts import shipped_articles_dir, shipped_packs_dir, shipped_roles_dir
from swarmforge.config.scaffold import packs
from swarmforge.errors import SwarmforgeError
from tests.support import SWARMFORGE, VENV_BIN

PACKS = packs()


def sf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    # Test infrastructure only: lets coverage follow the command into its interpreter.
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    return subprocess.run(
        [SWARMFORGE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def files_under(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root`: relative path -> (contents, mtime in ns)."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_tool_ships_the_packs_init_offers() -> None:
    assert {"two-pack", "four-pack", "six-pack"} <= set(PACKS)


@pytest.mark.parametrize("pack", PACKS)
def test_init_of_each_pack_gives_a_project_load_config_accepts(pack: str, tmp_path: Path) -> None:
    target = tmp_path / "new" / "project"  # missing: init creates it
    r = sf("init", "--pack", pack, str(target), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    shipped = Path(shipped_packs_dir()) / pack
    expected = parse_config((shipped / "swarmforge.conf").read_text())
    assert load_config(str(target)).names == expected.names
    ours = target / "swarmforge"
    assert (ours / "swarmforge.conf").read_bytes() == (shipped / "swarmforge.conf").read_bytes()
    constitution = Path(shipped_roles_dir()) / "constitution.prompt"
    assert (ours / "constitution.prompt").read_bytes() == constitution.read_bytes()
    for role in expected.roles:
        prompt = Path(shipped_roles_dir()) / f"{role.name}.prompt"
        assert (ours / "roles" / f"{role.name}.prompt").read_bytes() == prompt.read_bytes()
    articles = {p.name for p in (ours / "constitution" / "articles").iterdir()}
    shared = {p.name for p in Path(shipped_articles_dir()).glob("*.prompt")}
    own = {p.name for p in (shipped / "constitution" / "articles").glob("*.prompt")}
    assert articles == shared | own and "project.prompt" in articles
    assert "swarmforge up" in r.stdout and "swarmforge doctor" in r.stdout
    assert not (target / ".git").exists()  # init leaves git alone


def test_init_defaults_to_the_two_pack_in_the_current_directory(tmp_path: Path) -> None:
    r = sf("init", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert set(result) == {"pack", "dir", "written", "commit_first"}
    assert result["pack"] == "two-pack" and result["dir"] == str(tmp_path)
    written = sorted(os.path.relpath(p, tmp_path) for p in result["written"])
    assert written == sorted(files_under(tmp_path))
    assert "swarmforge/roles/coder.prompt" in written
    assert load_config(str(tmp_path)).names == ("coder", "cleaner")


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    assert sf("init", "--pack", "four-pack", cwd=tmp_path).returncode == 0
    conf = tmp_path / "swarmforge" / "swarmforge.conf"
    conf.write_text("window solo codex master\n")
    # One file gone: a refused init must not write it back either.
    (tmp_path / "swarmforge" / "roles" / "coder.prompt").unlink()
    before = files_under(tmp_path)
    r = sf("init", "--pack", "four-pack", cwd=tmp_path)
    assert r.returncode == 1
    assert "nothing was written" in r.stderr and "--force" in r.stderr
    assert str(conf) in r.stderr and "specifier.prompt" in r.stderr
    assert "coder.prompt" not in r.stderr
    assert files_under(tmp_path) == before


def test_init_refuses_even_when_a_single_file_exists(tmp_path: Path) -> None:
    own = tmp_path / "swarmforge" / "roles" / "cleaner.prompt"
    own.parent.mkdir(parents=True)
    own.write_text("my cleaner\n")
    r = sf("init", cwd=tmp_path)
    assert r.returncode == 1 and str(own) in r.stderr
    assert files_under(tmp_path) == {
        "swarmforge/roles/cleaner.prompt": (b"my cleaner\n", own.stat().st_mtime_ns)
    }


def test_init_force_replaces_existing_files(tmp_path: Path) -> None:
    assert sf("init", "--pack", "six-pack", cwd=tmp_path).returncode == 0
    conf = tmp_path / "swarmforge" / "swarmforge.conf"
    conf.write_text("window solo codex master\n")
    (tmp_path / "swarmforge" / "roles" / "QA.prompt").unlink()
    local = tmp_path / "swarmforge" / "constitution" / "articles" / "local-extra.prompt"
    local.write_text("kept\n")
    r = sf("init", "--pack", "six-pack", "--force", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    shipped = Path(shipped_packs_dir()) / "six-pack" / "swarmforge.conf"
    assert conf.read_bytes() == shipped.read_bytes()
    assert (tmp_path / "swarmforge" / "roles" / "QA.prompt").is_file()
    assert local.read_text() == "kept\n"  # files the pack does not ship are not touched
    assert load_config(str(tmp_path)).names[-1] == "QA"
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_an_unknown_pack_is_an_error_listing_the_packs(tmp_path: Path) -> None:
    r = sf("init", "--pack", "nine-pack", str(tmp_path / "p"), cwd=tmp_path)
    assert r.returncode == 1
    assert "nine-pack" in r.stderr
    for pack in PACKS:
        assert pack in r.stderr
    assert not (tmp_path / "p").exists()


def test_pack_list_prints_the_packs_and_their_roles(tmp_path: Path) -> None:
    r = sf("init", "--pack", "list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [line.split()[0] for line in r.stdout.splitlines()] == PACKS
    assert "specifier" in r.stdout and "QA" in r.stdout
    assert json.loads(sf("init", "--pack", "list", "--json", cwd=tmp_path).stdout) == {
        "packs": PACKS
    }
    assert list(tmp_path.iterdir()) == []


def test_init_into_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x\n")
    r = sf("init", "file", cwd=tmp_path)
    assert r.returncode == 1 and "not a directory" in r.stderr


def test_a_file_in_the_way_of_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "swarmforge").write_text("not a directory\n")
    r = sf("init", cwd=tmp_path)
    assert r.returncode == 1 and "Cannot write" in r.stderr and "swarmforge" in r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["swarmforge"]


def test_force_never_replaces_a_directory(tmp_path: Path) -> None:
    in_the_way = tmp_path / "swarmforge" / "roles" / "coder.prompt"
    in_the_way.mkdir(parents=True)
    r = sf("init", "--force", cwd=tmp_path)
    assert r.returncode == 1 and f"Cannot write {in_the_way}:" in r.stderr
    assert in_the_way.is_dir()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_a_file_that_appears_during_init_is_kept_and_the_rest_taken_back(tmp_path: Path) -> None:
    # What a concurrent writer would leave between the check for existing files and the writes.
    copies = scaffold.plan("two-pack", str(tmp_path))
    scaffold.make_dirs(copies)
    late = Path(copies[-1].target)
    late.write_text("someone else's\n")
    with pytest.raises(SwarmforgeError) as caught:
        scaffold.write_all_or_none(copies)
    assert str(late) in caught.value.details[0]
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [late]
    assert late.read_text() == "someone else's\n"


@pytest.mark.parametrize("pack", PACKS)
def test_init_writes_settings_and_an_example_rehearsal_for_the_packs_roles(
    pack: str, tmp_path: Path
) -> None:
    from swarmforge.config.settings import load_settings
    from swarmforge.rehearse.script import check_roles, parse_script

    assert sf("init", "--pack", pack, str(tmp_path), cwd=tmp_path).returncode == 0
    config = load_config(str(tmp_path))
    settings = load_settings(str(tmp_path), config.names)
    assert set(settings.roles) == set(config.names)
    path = tmp_path / "swarmforge" / "rehearse.toml"
    script = parse_script(path.read_bytes(), str(path))
    check_roles(script, str(path), {r.name: r.agent for r in config.roles})
    # One role commits and hands the commit on, the coder if it has one (in the main
    # checkout or not: its sandbox lets it commit in either).
    makers = [name for name, part in script.roles.items() if part.turns[0].expect.sent]
    assert len(makers) == 1
    maker = config.role(makers[0])
    assert maker.name == "coder" or "coder" not in config.names
    turns = script.roles[maker.name].turns
    assert turns[1].expect.completed == 1
    # It keeps the constitution's rules: drafts in tmp/, nothing under .swarmforge/.
    text = path.read_text()
    assert ".swarmforge/" not in text.split("\n\n", 1)[1] and "tmp/greeting.draft" in text
