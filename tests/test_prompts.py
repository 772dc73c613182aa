"""Role prompts and the layered constitution: shipped articles, local overrides, assembly."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmforge.config import prompts
from swarmforge.config.conf import parse_config
from swarmforge.config.prompts import shipped_articles_dir, shipped_packs_dir, shipped_roles_dir
from swarmforge.config.scaffold import plan
from swarmforge.swarm.rolecommand import instruction_files

ARTICLES = Path("swarmforge") / "constitution" / "articles"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project laid out as SwarmForge lays it out, with articles of its own."""
    root = tmp_path / "project"
    write(root / "swarmforge" / "constitution.prompt", "constitution text\n")
    write(root / ARTICLES / "workflow.prompt", "local workflow\n")
    write(root / ARTICLES / "local-engineering.prompt", "local engineering\n")
    write(root / ARTICLES / "project.prompt", "project shape")
    write(root / ARTICLES / "notes.md", "not an article\n")
    write(root / "swarmforge" / "roles" / "coder.prompt", "You are the coder.\n")
    return root


def test_an_agent_reads_the_constitution_the_projects_articles_in_order_and_its_prompt(
    project: Path,
) -> None:
    articles = [str(ARTICLES / name) for name in ("local-engineering", "project", "workflow")]
    assert instruction_files(str(project), "coder") == [
        "swarmforge/constitution.prompt",
        *(f"{article}.prompt" for article in articles),
        "swarmforge/roles/coder.prompt",
    ]


def test_only_regular_prompt_files_are_articles(tmp_path: Path) -> None:
    write(tmp_path / "a.prompt", "a\n")
    write(tmp_path / "notes.md", "not an article\n")
    write(tmp_path / ".hidden.prompt", "editor file\n")
    (tmp_path / "dir.prompt").mkdir()
    assert prompts.article_names(str(tmp_path)) == ["a.prompt"]
    assert prompts.article_names(str(tmp_path / "missing")) == []


def test_the_instruction_points_at_the_constitution_and_the_role_prompt() -> None:
    text = prompts.instruction_text("QA")
    assert "swarmforge/constitution.prompt" in text and "swarmforge/roles/QA.prompt" in text
    assert text.count("\n") == 2
    path = prompts.instruction_path("/p/x", "QA")
    assert path == "/p/x/.swarmforge/prompts/QA.md"


def test_the_tool_ships_a_constitution_and_shared_articles() -> None:
    constitution = (Path(shipped_roles_dir()) / "constitution.prompt").read_text()
    assert "swarmforge/constitution/articles/" in constitution
    assert prompts.article_names(shipped_articles_dir()) == [
        "engineering.prompt",
        "handoffs.prompt",
        "workflow.prompt",
    ]


ROLE_PROMPTS = sorted(
    p.name for p in Path(shipped_roles_dir()).glob("*.prompt") if p.name != "constitution.prompt"
)


def test_the_tool_ships_the_prompts_of_every_pack_role() -> None:
    expected = {
        "specifier",
        "coder",
        "cleaner",
        "refactorer",
        "architect",
        "hardener",
        "QA",
        "reviewer",
    }
    assert {name.removesuffix(".prompt") for name in ROLE_PROMPTS} == expected


@pytest.mark.parametrize("name", ROLE_PROMPTS)
def test_each_role_prompt_teaches_the_helpers(name: str) -> None:
    text = (Path(shipped_roles_dir()) / name).read_text()
    assert 30 <= text.count("\n") <= 80
    for needle in (
        "ready_for_next.sh",
        "done_with_current.sh",
        "swarm_handoff.sh",
        "NO_TASK",
        "BATCH",
        "merge_and_process <sender> <commit>",
        "type: git_handoff",
        "priority: ",
        "commit: <10 hex characters>",
        "HANDOFF QUEUED",
    ):
        assert needle in text, needle


@pytest.mark.parametrize("pack", ["two-pack", "four-pack", "six-pack"])
def test_each_pack_explains_its_pipeline(pack: str, tmp_path: Path) -> None:
    pack_dir = Path(shipped_packs_dir()) / pack
    config = parse_config((pack_dir / "swarmforge.conf").read_text())
    project_article = (pack_dir / "constitution" / "articles" / "project.prompt").read_text()
    for role in config.names:
        assert role in project_article
    assert "priority: 00" in project_article and "merge-only" in project_article
    # `init` writes the pack's own article beside the shipped shared ones.
    written = [Path(c.target) for c in plan(pack, str(tmp_path))]
    names = [p.name for p in written if p.parent == tmp_path / ARTICLES]
    assert names == ["engineering.prompt", "handoffs.prompt", "project.prompt", "workflow.prompt"]
