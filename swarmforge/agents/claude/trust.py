"""claude's state file: what stops claude from starting unattended, and trusting a project.

claude keeps its state in one JSON file: `$CLAUDE_CONFIG_DIR/.claude.json`, else
`~/.claude.json` (a non-empty legacy `.config.json` in `$CLAUDE_CONFIG_DIR`, else
`~/.claude`, wins over both). It starts without a question when
`hasCompletedOnboarding` is true, `projects["<repository root>"].hasTrustDialogAccepted`
is true (the entry covers the root's subdirectories and its linked worktrees; an entry
above the repository root does not) and, when `ANTHROPIC_API_KEY` is set, the key's last
20 characters are in `customApiKeyResponses.approved`.

An edit is written in the file's own layout (claude's is `JSON.stringify(obj, null, 2)`)
and refused in any other, so only the entries it changes differ.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from swarmforge.agents.homes import (
    Blocker,
    Env,
    corrupt,
    edit_command,
    home_dir,
    read,
    text,
    trust_key,
)
from swarmforge.errors import SwarmforgeError

KEY_SUFFIX = 20  # claude remembers an approved API key by its last 20 characters


def claude_config_path(env: Env) -> str:
    """The JSON file claude keeps its onboarding, trust and API key answers in."""
    config_dir = env.get("CLAUDE_CONFIG_DIR")
    legacy = Path(config_dir or Path(home_dir(env), ".claude"), ".config.json")
    if os.path.isfile(legacy) and legacy.stat().st_size > 0:  # noqa: PTH113 - False where Path.is_file() raises (EACCES)
        return str(legacy)
    suffix = "-custom-oauth" if env.get("CLAUDE_CODE_CUSTOM_OAUTH_URL") else ""
    return str(Path(config_dir or home_dir(env), f".claude{suffix}.json"))


def _doc(path: str, data: bytes | None) -> dict[str, Any]:
    content = text(path, data or b"")
    if not content.strip():
        return {}
    try:
        doc = json.loads(content)
    except json.JSONDecodeError as exc:
        raise corrupt(path, exc.lineno, f"not valid JSON: {exc.msg}") from None
    return _object(doc, path, "the document")


def _object(value: object, path: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise corrupt(path, None, f"{where} is not a JSON object")
    return value


def _array(value: object, path: str, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise corrupt(path, None, f"{where} is not a JSON array")
    return value


def _trusted(path: str, doc: Mapping[str, Any], key: str) -> bool:
    projects = _object(doc.get("projects", {}), path, "projects")
    entry = _object(projects.get(key, {}), path, f'projects["{key}"]')
    return entry.get("hasTrustDialogAccepted") is True


def _responses(path: str, doc: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """The approved and the rejected API key suffixes."""
    responses = _object(doc.get("customApiKeyResponses", {}), path, "customApiKeyResponses")
    approved = _array(responses.get("approved", []), path, "customApiKeyResponses.approved")
    return approved, _array(responses.get("rejected", []), path, "customApiKeyResponses.rejected")


def _key_suffix(api_key: str) -> str:
    return api_key.strip()[-KEY_SUFFIX:]


def blockers(project_root: str, env: Env) -> list[Blocker]:
    """What would stop claude from starting unattended in the project; [] when nothing."""
    path = claude_config_path(env)
    key = trust_key(project_root)
    api_key = env.get("ANTHROPIC_API_KEY", "")
    try:
        doc = _doc(path, read(path))
        trusted = _trusted(path, doc, key)
        approved = not _key_suffix(api_key) or _key_suffix(api_key) in _responses(path, doc)[0]
    except SwarmforgeError as exc:
        return [Blocker("claude", exc.message, edit_command(path))]
    found = []
    if doc.get("hasCompletedOnboarding") is not True:
        problem = f"claude's first-run setup is not done ({path}: hasCompletedOnboarding)"
        found.append(Blocker("claude", problem, "claude"))
    fix = "swarmforge trust --agent claude"
    if not trusted:
        found.append(Blocker("claude", f"{key} is not trusted ({path})", fix))
    if not approved:
        problem = f"ANTHROPIC_API_KEY is not approved in {path} (claude asks before using a key)"
        found.append(Blocker("claude", problem, fix))
    return found


def _edit(path: str, doc: dict[str, Any], key: str, api_key: str) -> dict[str, Any]:
    """`doc` with `key` trusted and `api_key` approved; the same object when nothing changes."""
    new = dict(doc)
    if not _trusted(path, doc, key):
        projects = doc.get("projects", {})
        new["projects"] = {
            **projects,
            key: {**projects.get(key, {}), "hasTrustDialogAccepted": True},
        }
    approved, rejected = _responses(path, doc)
    suffix = _key_suffix(api_key)
    if suffix and suffix not in approved:
        # As claude's own setting does: approving a key takes it off the rejected list.
        new["customApiKeyResponses"] = {
            **doc.get("customApiKeyResponses", {}),
            "approved": [*approved, suffix],
            "rejected": [k for k in rejected if k != suffix],
        }
    return new if new != doc else doc


def _render(path: str, content: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    """`new` in the layout of `content` (claude's `JSON.stringify(obj, null, 2)`), or an error."""
    if not content.strip():
        return json.dumps(new, indent=2, ensure_ascii=False)
    for ascii_only in (False, True):
        for indent in (2, 4):
            body = json.dumps(old, indent=indent, ensure_ascii=ascii_only)
            if content.removesuffix("\n") == body:
                tail = content[len(body) :]
                return json.dumps(new, indent=indent, ensure_ascii=ascii_only) + tail
    raise SwarmforgeError(
        f"{path} is not laid out as claude writes it, so it cannot be changed "
        "without rewriting the rest of it; nothing was written.",
        hint="Run `claude` once (it rewrites the file in its own layout) and try again.",
    )


def with_trust(path: str, data: bytes | None, key: str, api_key: str) -> bytes | None:
    """The file `data` of `path` with `key` trusted and `api_key` approved; None if it is."""
    doc = _doc(path, data)
    edited = _edit(path, doc, key, api_key)
    if edited is doc:
        return None
    return _render(path, text(path, data or b""), doc, edited).encode()


def fresh_config(key: str, api_key: str | None) -> bytes:
    """A new file: onboarding done, `key` trusted and, when given, `api_key` approved."""
    doc: dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "projects": {key: {"hasTrustDialogAccepted": True}},
    }
    if api_key:
        doc["customApiKeyResponses"] = {"approved": [_key_suffix(api_key)], "rejected": []}
    return json.dumps(doc, indent=2, ensure_ascii=False).encode()
