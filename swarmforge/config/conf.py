"""swarmforge/swarmforge.conf in SwarmForge's format, validated when it is read.

One role per line::

    window <role> <agent> <worktree> [task|batch] [extra args...]
    window-invisible <role> <agent> <worktree> [task|batch] [extra args...]

Blank lines and lines whose first non-blank character is `#` are ignored; any
other directive is refused. What each line holds, and how it is read, is in
`config/windowline.py`; this module reads the file, refuses duplicates, and finds
each role's prompt.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.config.roster import CONSTITUTION_FILE, ROLES_DIR, RoleSpec, SwarmConfig
from swarmforge.config.windowline import role_from_line
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.layout import CONFIG_FILE, SWARMFORGE_DIR


def _has_control(text: str) -> bool:
    return any(not c.isprintable() and c not in " \t" for c in text)


def parse_config(text: str, path: str = CONFIG_FILE) -> SwarmConfig:
    """Parse swarmforge.conf text; CorruptFile names the file and line at fault."""
    roles: list[RoleSpec] = []
    names: set[str] = set()
    trees: set[str] = set()
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _has_control(line):
            raise CorruptFile(path, number, "control character in line")
        role = role_from_line(line, path, number)
        if role.name in names:
            raise CorruptFile(path, number, f"Duplicate role '{role.name}'")
        if role.worktree in trees:
            raise CorruptFile(path, number, f"Duplicate worktree '{role.worktree}'")
        names.add(role.name)
        if not role.in_main_checkout:
            trees.add(role.worktree)
        roles.append(role)
    if not roles:
        raise CorruptFile(path, None, "No windows defined")
    return SwarmConfig(path=path, roles=tuple(roles))


def role_prompt_path(project_root: str | os.PathLike[str], role: str) -> str:
    """Where SwarmForge keeps a role's prompt: swarmforge/roles/<role>.prompt."""
    root = Path(os.path.abspath(project_root))  # noqa: PTH100 - ".." removed, symlinks kept
    return str(root / ROLES_DIR / f"{role}.prompt")


def _read_text(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SwarmforgeError(f"Config not found at {path}") from None
    try:
        # utf-8-sig: a byte-order mark some editors write is not part of the first line.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorruptFile(path, data[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None


def check_prompts(config: SwarmConfig, root: Path) -> None:
    """Every role with an agent has swarmforge/roles/<role>.prompt (exec roles read none).

    `root` is the project's absolute path.
    """
    for role in config.roles:
        prompt = role_prompt_path(root, role.name)
        if role.is_exec or Path(prompt).is_file():
            continue
        old = root / SWARMFORGE_DIR / f"{role.name}.prompt"
        error = CorruptFile(config.path, role.line, f"Missing role prompt {prompt}")
        if old.is_file():
            # An older SwarmForge layout kept role prompts directly under swarmforge/.
            error.hint = f"Move {old} to {prompt}."
        raise error


def load_config(project_root: str) -> SwarmConfig:
    """Read and validate the project's swarmforge/swarmforge.conf, constitution and prompts."""
    root = Path(os.path.abspath(project_root))  # noqa: PTH100 - ".." removed, symlinks kept
    path = str(root / CONFIG_FILE)
    text = _read_text(path)
    constitution = root / CONSTITUTION_FILE
    if not constitution.is_file():
        raise SwarmforgeError(f"Constitution prompt not found at {constitution}")
    config = parse_config(text, path)
    check_prompts(config, root)
    return config
