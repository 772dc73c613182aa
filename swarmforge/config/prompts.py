"""Role prompts and the layered constitution, laid out as SwarmForge lays them out.

In a project::

    swarmforge/constitution.prompt            the entry point; takes precedence over articles
    swarmforge/constitution/articles/*.prompt the articles, read in name order
    swarmforge/roles/<role>.prompt            one prompt per role

The tool ships shared articles (`roles/constitution/articles/` in this checkout).
`init` writes them into the project's articles directory, to be committed with the
rest of `swarmforge/` (worktree roles read what is committed); `up` never writes
there. A project overrides a shipped article by keeping a file of the same name,
and adds to it with a `local-<name>.prompt`.

Agents are started with SwarmForge's short instruction: read the constitution and the
role prompt, and every file they refer to.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.config.roster import CONSTITUTION_FILE
from swarmforge.layout import PROMPTS_DIR, SWARMFORGE_DIR

ARTICLES_DIR = str(Path(SWARMFORGE_DIR, "constitution", "articles"))
PROMPT_SUFFIX = ".prompt"


def shipped_root() -> Path:
    """The directory holding the tool's shipped `roles/` and `conf/`.

    A wheel carries them inside the package (`swarmforge/_shipped/`); a source
    checkout (and an editable install) has them at its top.
    """
    package = Path(__file__).absolute().parent.parent
    inside = package / "_shipped"
    return inside if inside.is_dir() else package.parent


def shipped_roles_dir() -> str:
    """The shipped role prompts and constitution (`roles/`)."""
    return str(shipped_root() / "roles")


def shipped_articles_dir() -> str:
    """The shipped shared constitution articles."""
    return str(Path(shipped_roles_dir(), "constitution", "articles"))


def shipped_packs_dir() -> str:
    """The shipped ready configurations (`conf/<pack>/`)."""
    return str(shipped_root() / "conf")


def article_names(directory: str | os.PathLike[str]) -> list[str]:
    """File names of the `*.prompt` articles in `directory`, sorted; none if it is missing."""
    try:
        entries = list(Path(directory).iterdir())
    except FileNotFoundError:
        return []
    return sorted(
        entry.name
        for entry in entries
        if entry.name.endswith(PROMPT_SUFFIX) and not entry.name.startswith(".") and entry.is_file()
    )


def instruction_text(role: str) -> str:
    """The opening prompt every agent gets, pointing it at its constitution and role prompt."""
    return (
        f"Read {CONSTITUTION_FILE} and every file it refers to, recursively, "
        "and obey all of those instructions.\n"
        f"Read {Path(SWARMFORGE_DIR, 'roles', role + PROMPT_SUFFIX)} and every file "
        "it refers to, recursively, and follow all of those instructions.\n"
    )


def instruction_path(project_root: str, role: str) -> str:
    """Where `up` keeps a role's instruction file (`.swarmforge/prompts/<role>.md`)."""
    root = Path(os.path.abspath(project_root))  # noqa: PTH100 - ".." removed, symlinks kept
    return str(root / PROMPTS_DIR / f"{role}.md")
