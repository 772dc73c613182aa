"""codex's config.toml: what stops codex from starting unattended, and trusting a project.

codex reads `$CODEX_HOME/config.toml` (default `~/.codex`). It starts without a
question when `[projects."<repository root>"]` has `trust_level = "trusted"` (covering
the root's subdirectories and its linked worktrees) and it has a provider: a login in
`$CODEX_HOME/auth.json`, or a `model_provider` that needs no OpenAI login (its key, if
any, read from `env_key`). `OPENAI_API_KEY` alone is not enough: codex shows its
sign-in screen.

An edit appends the project's table or changes its one `trust_level` line, and is
checked by parsing the result, so the rest of the file stays as it was.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

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

LOCAL_PROVIDERS = frozenset({"ollama", "lmstudio"})  # codex's built-ins that need no login


@dataclass(frozen=True)
class Provider:
    """A model provider for codex: an OpenAI-style API at `base_url`, its key in `env_key`."""

    base_url: str
    env_key: str = "SWARMFORGE_MODEL_KEY"
    name: str = "swarmforge"
    model: str = "gpt-5"
    wire_api: str = "responses"


def codex_home(env: Env) -> Path:
    """codex's directory: $CODEX_HOME, else ~/.codex."""
    return Path(env.get("CODEX_HOME") or Path(home_dir(env), ".codex"))


def codex_config_path(env: Env) -> str:
    """codex's config.toml."""
    return str(codex_home(env) / "config.toml")


def _doc(path: str, data: bytes | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text(path, data or b""))
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r" \(at line (\d+), column \d+\)$", str(exc))
        line = int(found[1]) if found else None
        problem = str(exc)[: found.start()] if found else str(exc)
        raise corrupt(path, line, f"not valid TOML: {problem}") from None


def _table(doc: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _provider(doc: Mapping[str, Any]) -> tuple[str, bool, str | None, bool]:
    """codex's provider: its name, whether it needs a login, its key variable, and if known."""
    name = str(doc.get("model_provider") or "openai")
    if name == "openai":
        return name, True, None, True
    if name in LOCAL_PROVIDERS:
        return name, False, None, True
    # openai and the local providers are built in; any other name needs its own table.
    provider = _table(_table(doc, "model_providers"), name)
    env_key = provider.get("env_key")
    key = env_key if isinstance(env_key, str) and env_key else None
    return name, provider.get("requires_openai_auth") is True, key, bool(provider)


def _login_blocker(doc: Mapping[str, Any], env: Env) -> Blocker | None:
    """Why codex has no provider it can use, or None."""
    name, needs_login, env_key, known = _provider(doc)
    path = codex_config_path(env)
    if not known:
        problem = f"model_provider '{name}' is not defined in {path}"
        return Blocker("codex", problem, edit_command(path))
    if env_key and not env.get(env_key):
        problem = f"{env_key} is not set (codex's model provider '{name}' reads its key from it)"
        return Blocker("codex", problem, f"export {env_key}=<key>")
    auth = codex_home(env) / "auth.json"
    # A keyring holds the credentials where this process cannot look: assume a login.
    elsewhere = doc.get("cli_auth_credentials_store") in ("keyring", "auto")
    if not needs_login or elsewhere or auth.is_file():
        return None
    fix = "codex login"
    if env.get("OPENAI_API_KEY"):
        fix = "printenv OPENAI_API_KEY | codex login --with-api-key"
    return Blocker("codex", f"codex is not logged in (no {auth}; it would ask)", fix)


def blockers(project_root: str, env: Env) -> list[Blocker]:
    """What would stop codex from starting unattended in the project; [] when nothing."""
    path = codex_config_path(env)
    if env.get("CODEX_HOME") and not os.path.isdir(env["CODEX_HOME"]):  # noqa: PTH112 - False where Path.is_dir() raises (EACCES)
        problem = f"CODEX_HOME is {env['CODEX_HOME']}, which does not exist (codex will not start)"
        return [Blocker("codex", problem, f"mkdir -p {shlex.quote(env['CODEX_HOME'])}")]
    try:
        doc = _doc(path, read(path))
    except SwarmforgeError as exc:
        return [Blocker("codex", exc.message, edit_command(path))]
    found = []
    key = trust_key(project_root)
    if _table(_table(doc, "projects"), key).get("trust_level") != "trusted":
        problem = f"{key} is not trusted ({path})"
        found.append(Blocker("codex", problem, "swarmforge trust --agent codex"))
    login = _login_blocker(doc, env)
    return [*found, login] if login else found


def _header(line: str) -> Any:
    """What TOML makes of `line` alone when it is a table header (`{}` when it is not)."""
    if not line.lstrip().startswith("["):
        return {}
    try:
        return tomllib.loads(line)
    except tomllib.TOMLDecodeError:
        return {}


_TRUST_LINE = re.compile(r"""^(\s*"?trust_level"?\s*=\s*)("[^"\\]*"|'[^']*')(\s*(#.*)?)$""")


def _retrusted(lines: list[str], key: str, newline: str) -> list[str] | None:
    """`lines` with the trust level of the existing `[projects."<key>"]` table set, or None."""
    table: dict[str, Any] = {"projects": {key: {}}}
    start = next((i for i, line in enumerate(lines) if _header(line) == table), None)
    if start is None:
        return None
    if not lines[start].endswith("\n"):
        lines[start] += newline
    end = next((i for i in range(start + 1, len(lines)) if _header(lines[i])), len(lines))
    for index in range(start + 1, end):
        found = _TRUST_LINE.match(lines[index].rstrip("\r\n"))
        if found:
            tail = lines[index][len(lines[index].rstrip("\r\n")) :]
            lines[index] = f'{found[1]}"trusted"{found[3]}{tail}'
            return lines
    return [*lines[: start + 1], f'trust_level = "trusted"{newline}', *lines[start + 1 :]]


def _render(path: str, content: str, doc: dict[str, Any], key: str) -> str:
    """`content` with `key` trusted: a table appended, or one line changed; checked by parsing."""
    newline = "\r\n" if "\r\n" in content else "\n"
    if key not in _table(doc, "projects"):
        added = tomli_w.dumps({"projects": {key: {"trust_level": "trusted"}}})
        gap = "" if not content else newline if content.endswith("\n") else newline * 2
        new: str | None = content + gap + added.replace("\n", newline)
    else:
        lines = _retrusted(content.splitlines(keepends=True), key, newline)
        new = "".join(lines) if lines is not None else None
    wanted = {**doc, "projects": {**_table(doc, "projects")}}
    wanted["projects"][key] = {**_table(wanted["projects"], key), "trust_level": "trusted"}
    try:
        ok = new is not None and tomllib.loads(new) == wanted
    except tomllib.TOMLDecodeError:
        ok = False
    if new is None or not ok:
        raise SwarmforgeError(
            f'{path} declares projects."{key}" in a form this command cannot change without '
            "touching the rest of the file; nothing was written.",
            hint=f'Set trust_level = "trusted" for it by hand, as [projects."{key}"] does.',
        )
    return new


def with_trust(path: str, data: bytes | None, key: str) -> bytes | None:
    """The file `data` of `path` with `key` trusted; None when it already is."""
    doc = _doc(path, data)
    if _table(_table(doc, "projects"), key).get("trust_level") == "trusted":
        return None
    return _render(path, text(path, data or b""), doc, key).encode()


def fresh_config(key: str, provider: Provider | None) -> bytes:
    """A new config.toml: `key` trusted, the managed daemon and update check off, and
    `provider` as the model provider when given."""
    doc: dict[str, Any] = {"check_for_update_on_startup": False}
    if provider is not None:
        p = provider
        doc |= {"model_provider": p.name, "model": p.model}
        entry = {"name": p.name, "base_url": p.base_url, "env_key": p.env_key}
        doc["model_providers"] = {p.name: {**entry, "wire_api": p.wire_api}}
    doc["features"] = {"daemon_auto_start": False}
    doc["projects"] = {key: {"trust_level": "trusted"}}
    return tomli_w.dumps(doc).encode()


def fresh_auth(api_key: str) -> bytes:
    """A new auth.json that logs codex in with `api_key`."""
    return json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": api_key}).encode()
