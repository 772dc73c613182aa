"""The documentation: every page the code and the README point at exists, and docs/ holds
together (its index, its links, its examples), so a message never sends anyone nowhere."""

from __future__ import annotations

import json
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
from swarmforge.rehearse.script import check_roles, parse_script
from swarmforge.run.spec.file import parse_spec
from tests.support import SWARMFORGE

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
INDEX = DOCS / "README.md"
SKIPPED_DIRS = {".git", ".venv", ".worktrees", ".swarmforge", "__pycache__", "node_modules"}
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")
# A document name: `docs/protocol.md`, `README.md`. Not a pattern such as `<role>.md`,
# `{role}.md` or the suffix `.complete.md`: the name may not follow `>`, `}`, `.` or `/`.
DOC_NAME = re.compile(r"(?<![\w<>{}./*-])([\w-][\w./-]*\.md)\b")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
BLOCK = re.compile(r"^```(\w[\w-]*)\n(.*?)^```$", re.M | re.S)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*$", re.M)
PAGES = sorted(DOCS.glob("*.md"))


def doc_references(text: str) -> list[str]:
    """The document names `text` mentions (web addresses left out)."""
    return DOC_NAME.findall(URL.sub(" ", text))


def sources() -> list[Path]:
    """The files whose messages and comments may point at a document."""
    code = sorted((REPO / "swarmforge").rglob("*.py"))
    scripts = sorted(p for p in (REPO / "bin").iterdir() if p.is_file())
    return [*code, *scripts, REPO / "README.md"]


def repository_names() -> set[str]:
    """The name of every file in the checkout (not in tool or runtime directories)."""
    names: set[str] = set()
    for _, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        names.update(files)
    return names


def resolves(reference: str, source: Path, names: set[str]) -> bool:
    """True if the document `reference`, mentioned in `source`, is in the repository."""
    if (REPO / reference).is_file() or (source.parent / reference).is_file():
        return True
    return "/" not in reference and reference in names


def test_the_reference_pattern_finds_documents_and_skips_patterns() -> None:
    text = (
        "see docs/protocol.md. and NOTES.md, [docs](docs/README.md), "
        "`.swarmforge/prompts/<role>.md`, f'{role}.md', `<taskId>.report.md`, "
        "'.complete.md', https://example.com/CHANGES.md"
    )
    assert doc_references(text) == ["docs/protocol.md", "NOTES.md", "docs/README.md"]


def test_every_document_the_code_and_readme_mention_exists() -> None:
    names = repository_names()
    missing = []
    for source in sources():
        for reference in doc_references(source.read_text(encoding="utf-8")):
            if not resolves(reference, source, names):
                missing.append(f"{source.relative_to(REPO)}: {reference}")
    assert missing == []


def test_the_code_points_at_the_protocol_page() -> None:
    mentioned = {
        source.relative_to(REPO).as_posix()
        for source in sources()
        if "docs/protocol.md" in source.read_text(encoding="utf-8")
    }
    assert {"bin/swarm_handoff.sh", "swarmforge/swarm/shims.py", "README.md"} <= mentioned


def _links(page: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(page.read_text(encoding="utf-8"))
        if not URL.match(target) and not target.startswith("mailto:")
    ]


def slug(heading: str) -> str:
    """The anchor a Markdown heading gets (GitHub's rule: lower case, no punctuation)."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = BLOCK.sub("", page.read_text(encoding="utf-8"))
    return {slug(h) for h in HEADING.findall(text)}


def test_the_index_links_only_to_existing_files_and_to_every_page() -> None:
    targets = [link.partition("#")[0] for link in _links(INDEX)]
    assert targets, "the index links to the pages"
    for target in targets:
        assert (DOCS / target).resolve().is_file(), target
    linked = {(DOCS / t).resolve() for t in targets}
    assert {p.resolve() for p in PAGES if p != INDEX} <= linked


@pytest.mark.parametrize(
    "page", [REPO / "README.md", *PAGES], ids=lambda p: p.relative_to(REPO).as_posix()
)
def test_every_link_of_a_page_leads_somewhere(page: Path) -> None:
    for link in _links(page):
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {link}"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{page.name}: {link}"


def blocks(lang: str) -> list[tuple[Path, str]]:
    return [
        (page, text)
        for page in PAGES
        for kind, text in BLOCK.findall(page.read_text(encoding="utf-8"))
        if kind == lang
    ]


def test_configuration_examples_parse() -> None:
    assert blocks("conf") and blocks("settings")
    for page, text in blocks("conf"):
        assert parse_config(text, page.name).roles
    for page, text in blocks("settings"):
        assert parse_settings(text.encode(), page.name).roles


def test_run_specs_parse() -> None:
    specs = [(page, tomllib.loads(text)) for page, text in blocks("toml")]
    specs += [
        (page, json.loads(text)) for page, text in blocks("json") if page.name.startswith("planned")
    ]
    assert len(specs) >= 4
    for page, data in specs:
        assert parse_spec(data, page.name).tasks
    for _, text in blocks("json"):
        json.loads(text)


def test_draft_examples_pass_the_gate_rules() -> None:
    asked: list[str] = []

    def resolve(commit: str) -> tuple[str | None, str | None]:
        asked.append(commit)  # no repository here: the example's commit is taken as it is
        return commit, None

    for _, text in blocks("draft"):
        valid, errors = draft.validate(text.encode(), frozenset({"cleaner"}), resolve)
        assert errors == [] and valid is not None
    assert asked


def test_rehearsal_examples_fit_the_adversaries_pack() -> None:
    conf = REPO / "conf" / "adversaries" / "swarmforge.conf"
    agents = {r.name: r.agent for r in parse_config(conf.read_text(), str(conf)).roles}
    assert blocks("rehearsal")
    for page, text in blocks("rehearsal"):
        script = parse_script(text.encode(), page.name)
        check_roles(script, page.name, agents)


def commands() -> list[list[str]]:
    """The `swarmforge` commands and the benchmark scripts the pages show."""
    found: set[tuple[str, ...]] = set()
    for lang in ("text", "sh"):
        for _, text in blocks(lang):
            for line in text.splitlines():
                words = line.split("#")[0].split()
                if words[:2] and words[0].endswith("bin/python") and words[1].startswith("bench/"):
                    found.add(("python", words[1]))
                if words[:1] != ["swarmforge"]:
                    continue
                path = ["swarmforge"]
                for word in words[1:]:
                    if not re.fullmatch(r"[a-z][a-z-]*", word):
                        break
                    path.append(word)
                found.add(tuple(path))
    return [list(c) for c in sorted(found)]


@pytest.mark.parametrize("command", commands(), ids=" ".join)
def test_every_command_the_docs_show_exists(command: list[str]) -> None:
    if command[0] == "swarmforge":
        argv = [str(SWARMFORGE), *command[1:]]
    else:
        argv = [sys.executable, str(REPO / command[1])]
    result = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


CODE_MAP = DOCS / "code.md"
# `### \`run/remote/\`: ...`: the folder a table of docs/code.md lists.
TABLE_HEADING = re.compile(r"^### (?:The base modules|`([\w/]+)/`)", re.M)
MODULE_ROW = re.compile(r"^\| `([\w/]+\.py)` \|", re.M)


def test_the_code_map_has_one_row_for_each_module_and_none_for_a_module_that_is_gone() -> None:
    package = REPO / "swarmforge"
    modules = {str(p.relative_to(package)) for p in package.rglob("*.py")}
    # A folder's __init__.py holds its docstring, which the table's heading says.
    required = {m for m in modules if not m.endswith("/__init__.py")}
    text = CODE_MAP.read_text()
    headings = list(TABLE_HEADING.finditer(text))
    listed, unknown = set(), []
    for heading, following in zip(headings, [*headings[1:], None], strict=True):
        folder = heading.group(1) or ""
        table = text[heading.end() : following.start() if following else len(text)]
        for row in MODULE_ROW.findall(table):
            # A heading may name a folder and the ones in it: `agents/claude/` lists
            # `claude/agent.py` and `codex/agent.py`, relative to `agents/`.
            base = Path(folder)
            here = [str(f / row) for f in (base, base.parent) if f != Path()]
            found = [m for m in [*here, row] if m in modules]
            if found:
                listed.add(found[0])
            else:
                unknown.append(str(base / row))
    assert not unknown, f"docs/code.md lists modules that do not exist: {unknown}"
    missing = sorted(required - listed)
    assert not missing, f"docs/code.md has no row for {missing}"
