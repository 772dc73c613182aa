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

from swarmforge.config.roster import CONSTITUTION_FILE
from swarmforge.layout import PROMPTS_DIR, SWARMFORGE_DIR

ARTICLES_DIR = os.path.join(SWARMFORGE_DIR, "constitution", "articles")
PROMPT_SUFFIX = ".prompt"


def shipped_root() -> str:
    """The directory holding the tool's shipped `roles/` and `conf/`.

    A wheel carries them inside the package (`swarmforge/_shipped/`); a source
    checkout (and an editable install) has them at its top.
    """
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    inside = os.path.join(package, "_shipped")
    return inside if os.path.isdir(inside) else os.path.dirname(package)


def shipped_roles_dir() -> str:
    """The shipped role prompts and constitution (`roles/`)."""
    return os.path.join(shipped_root(), "roles")


def shipped_articles_dir() -> str:
    """The shipped shared constitution articles."""
    return os.path.join(shipped_roles_dir(), "constitution", "articles")


def shipped_packs_dir() -> str:
    """The shipped ready configurations (`conf/<pack>/`)."""
    return os.path.join(shipped_root(), "conf")


def article_names(directory: str) -> list[str]:
    """File names of the `*.prompt` articles in `directory`, sorted; none if it is missing."""
    try:
        entries = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(
        name
        for name in entries
        if name.endswith(PROMPT_SUFFIX)
        and not name.startswith(".")
        and os.path.isfile(os.path.join(directory, name))
    )


def instruction_text(role: str) -> str:
    """The opening prompt every agent gets, pointing it at its constitution and role prompt."""
    return (
        f"Read {CONSTITUTION_FILE} and every file it refers to, recursively, "
        "and obey all of those instructions.\n"
        f"Read {os.path.join(SWARMFORGE_DIR, 'roles', role + PROMPT_SUFFIX)} and every file "
        "it refers to, recursively, and follow all of those instructions.\n"
    )


def instruction_path(project_root: str, role: str) -> str:
    """Where `up` keeps a role's instruction file (`.swarmforge/prompts/<role>.md`)."""
    return os.path.join(os.path.abspath(project_root), PROMPTS_DIR, f"{role}.md")
