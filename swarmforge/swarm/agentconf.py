"""The agents' own configuration files: what stops claude or codex from starting unattended.

claude keeps its state in one JSON file: `$CLAUDE_CONFIG_DIR/.claude.json`, else
`~/.claude.json` (a non-empty legacy `.config.json` in `$CLAUDE_CONFIG_DIR`, else
`~/.claude`, wins over both). It starts without a question when
`hasCompletedOnboarding` is true, `projects["<repository root>"].hasTrustDialogAccepted`
is true (the entry covers the root's subdirectories and its linked worktrees; an entry
above the repository root does not) and, when `ANTHROPIC_API_KEY` is set, the key's last
20 characters are in `customApiKeyResponses.approved`.

codex reads `$CODEX_HOME/config.toml` (default `~/.codex`). It starts without a
question when `[projects."<repository root>"]` has `trust_level = "trusted"` (covering
the same directories) and it has a provider: a login in `$CODEX_HOME/auth.json`, or a
`model_provider` that needs no OpenAI login (its key, if any, read from `env_key`).
`OPENAI_API_KEY` alone is not enough: codex shows its sign-in screen.

Nothing here writes unless asked (`apply`, `seed_home`), and an edit changes only the
entries it must: the rest of the file stays byte for byte.
"""

from __future__ import annotations

import difflib
import json
import os
import pwd
import re
import shlex
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import tomli_w

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.fsutil import atomic_write
from swarmforge.swarm.spec import SwarmConfig

AGENTS = ("claude", "codex")
KEY_SUFFIX = 20  # claude remembers an approved API key by its last 20 characters
LOCAL_PROVIDERS = frozenset({"ollama", "lmstudio"})  # codex's built-ins that need no login
NEW_FILE_MODE = 0o600  # what both agents give the files they create

Env = Mapping[str, str]


@dataclass(frozen=True)
class Blocker:
    """Something that would stop `agent` from starting unattended, and the command that fixes it."""

    agent: str
    problem: str
    fix: str


@dataclass(frozen=True)
class Change:
    """A planned edit of one agent file: its bytes before (None: no file yet) and after."""

    agent: str
    path: str
    old: bytes | None
    new: bytes
    diff: str

    @property
    def created(self) -> bool:
        """True when the file does not exist yet."""
        return self.old is None


@dataclass(frozen=True)
class Provider:
    """A model provider for codex: an OpenAI-style API at `base_url`, its key in `env_key`."""

    base_url: str
    env_key: str = "SWARMFORGE_MODEL_KEY"
    name: str = "swarmforge"
    model: str = "gpt-5"
    wire_api: str = "responses"


@dataclass(frozen=True)
class SeededHome:
    """A throw-away home made by `seed_home`; `env()` points the agents at it."""

    home: str

    @property
    def claude_config(self) -> str:
        """claude's JSON file in this home (found through HOME or CLAUDE_CONFIG_DIR)."""
        return os.path.join(self.home, ".claude.json")

    @property
    def codex_home(self) -> str:
        """codex's directory in this home."""
        return os.path.join(self.home, ".codex")

    def env(self) -> dict[str, str]:
        """Variables to add to an agent's environment: they override the user's own, so an
        inherited CLAUDE_CONFIG_DIR or CODEX_HOME cannot lead an agent to the real files."""
        return {"HOME": self.home, "CLAUDE_CONFIG_DIR": self.home, "CODEX_HOME": self.codex_home}


def agents_used(config: SwarmConfig) -> tuple[str, ...]:
    """The agents of `AGENTS` that the roles of `config` run, in order of first use."""
    return tuple(dict.fromkeys(r.agent for r in config.roles if r.agent in AGENTS))


def home_dir(env: Env) -> str:
    """The home directory the agents see: $HOME, else the account's (as Node and Rust do)."""
    if env.get("HOME"):
        return env["HOME"]
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        raise SwarmforgeError(
            "HOME is not set and this account has no home directory.", hint="Set HOME."
        ) from None


def claude_config_path(env: Env) -> str:
    """The JSON file claude keeps its onboarding, trust and API key answers in."""
    config_dir = env.get("CLAUDE_CONFIG_DIR")
    legacy = os.path.join(config_dir or os.path.join(home_dir(env), ".claude"), ".config.json")
    if os.path.isfile(legacy) and os.path.getsize(legacy) > 0:
        return legacy
    suffix = "-custom-oauth" if env.get("CLAUDE_CODE_CUSTOM_OAUTH_URL") else ""
    return os.path.join(config_dir or home_dir(env), f".claude{suffix}.json")


def codex_home(env: Env) -> str:
    """codex's directory: $CODEX_HOME, else ~/.codex."""
    return env.get("CODEX_HOME") or os.path.join(home_dir(env), ".codex")


def codex_config_path(env: Env) -> str:
    """codex's config.toml."""
    return os.path.join(codex_home(env), "config.toml")


def trust_key(project_root: str) -> str:
    """The path both agents record trust under: the project's real path."""
    return os.path.realpath(project_root)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _corrupt(path: str, line: int | None, problem: str) -> CorruptFile:
    error = CorruptFile(path, line, problem)
    error.hint = "Repair it by hand (the agent cannot read it either); nothing was written."
    return error


def _text(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _corrupt(path, data[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None


def _claude_doc(path: str, data: bytes | None) -> dict[str, Any]:
    text = _text(path, data or b"")
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _corrupt(path, exc.lineno, f"not valid JSON: {exc.msg}") from None
    return _object(doc, path, "the document")


def _object(value: object, path: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _corrupt(path, None, f"{where} is not a JSON object")
    return value


def _array(value: object, path: str, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _corrupt(path, None, f"{where} is not a JSON array")
    return value


def _codex_doc(path: str, data: bytes | None) -> dict[str, Any]:
    try:
        return tomllib.loads(_text(path, data or b""))
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r" \(at line (\d+), column \d+\)$", str(exc))
        line = int(found[1]) if found else None
        problem = str(exc)[: found.start()] if found else str(exc)
        raise _corrupt(path, line, f"not valid TOML: {problem}") from None


def _table(doc: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _claude_trusted(path: str, doc: Mapping[str, Any], key: str) -> bool:
    projects = _object(doc.get("projects", {}), path, "projects")
    entry = _object(projects.get(key, {}), path, f'projects["{key}"]')
    return entry.get("hasTrustDialogAccepted") is True


def _claude_responses(path: str, doc: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """The approved and the rejected API key suffixes."""
    responses = _object(doc.get("customApiKeyResponses", {}), path, "customApiKeyResponses")
    approved = _array(responses.get("approved", []), path, "customApiKeyResponses.approved")
    return approved, _array(responses.get("rejected", []), path, "customApiKeyResponses.rejected")


def _key_suffix(api_key: str) -> str:
    return api_key.strip()[-KEY_SUFFIX:]


def _claude_edit(path: str, doc: dict[str, Any], key: str, api_key: str) -> dict[str, Any]:
    """`doc` with `key` trusted and `api_key` approved; the same object when nothing changes."""
    new = dict(doc)
    if not _claude_trusted(path, doc, key):
        projects = doc.get("projects", {})
        new["projects"] = {
            **projects,
            key: {**projects.get(key, {}), "hasTrustDialogAccepted": True},
        }
    approved, rejected = _claude_responses(path, doc)
    suffix = _key_suffix(api_key)
    if suffix and suffix not in approved:
        # As claude's own setting does: approving a key takes it off the rejected list.
        new["customApiKeyResponses"] = {
            **doc.get("customApiKeyResponses", {}),
            "approved": [*approved, suffix],
            "rejected": [k for k in rejected if k != suffix],
        }
    return new if new != doc else doc


def _claude_render(path: str, text: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    """`new` in the layout of `text` (claude's `JSON.stringify(obj, null, 2)`), or an error."""
    if not text.strip():
        return json.dumps(new, indent=2, ensure_ascii=False)
    for ascii_only in (False, True):
        for indent in (2, 4):
            body = json.dumps(old, indent=indent, ensure_ascii=ascii_only)
            if text.removesuffix("\n") == body:
                tail = text[len(body) :]
                return json.dumps(new, indent=indent, ensure_ascii=ascii_only) + tail
    raise SwarmforgeError(
        f"{path} is not laid out as claude writes it, so it cannot be changed "
        "without rewriting the rest of it; nothing was written.",
        hint="Run `claude` once (it rewrites the file in its own layout) and try again.",
    )


def _claude_blockers(project_root: str, env: Env) -> list[Blocker]:
    path = claude_config_path(env)
    key = trust_key(project_root)
    api_key = env.get("ANTHROPIC_API_KEY", "")
    try:
        doc = _claude_doc(path, _read(path))
        trusted = _claude_trusted(path, doc, key)
        approved = (
            not _key_suffix(api_key) or _key_suffix(api_key) in _claude_responses(path, doc)[0]
        )
    except SwarmforgeError as exc:
        return [Blocker("claude", exc.message, f"${{EDITOR:-vi}} {shlex.quote(path)}")]
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


def _codex_provider(doc: Mapping[str, Any]) -> tuple[str, bool, str | None, bool]:
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


def _codex_login_blocker(doc: Mapping[str, Any], env: Env) -> Blocker | None:
    """Why codex has no provider it can use, or None."""
    name, needs_login, env_key, known = _codex_provider(doc)
    path = codex_config_path(env)
    if not known:
        problem = f"model_provider '{name}' is not defined in {path}"
        return Blocker("codex", problem, f"${{EDITOR:-vi}} {shlex.quote(path)}")
    if env_key and not env.get(env_key):
        problem = f"{env_key} is not set (codex's model provider '{name}' reads its key from it)"
        return Blocker("codex", problem, f"export {env_key}=<key>")
    auth = os.path.join(codex_home(env), "auth.json")
    # A keyring holds the credentials where this process cannot look: assume a login.
    elsewhere = doc.get("cli_auth_credentials_store") in ("keyring", "auto")
    if not needs_login or elsewhere or os.path.isfile(auth):
        return None
    fix = "codex login"
    if env.get("OPENAI_API_KEY"):
        fix = "printenv OPENAI_API_KEY | codex login --with-api-key"
    return Blocker("codex", f"codex is not logged in (no {auth}; it would ask)", fix)


def _codex_blockers(project_root: str, env: Env) -> list[Blocker]:
    path = codex_config_path(env)
    if env.get("CODEX_HOME") and not os.path.isdir(env["CODEX_HOME"]):
        problem = f"CODEX_HOME is {env['CODEX_HOME']}, which does not exist (codex will not start)"
        return [Blocker("codex", problem, f"mkdir -p {shlex.quote(env['CODEX_HOME'])}")]
    try:
        doc = _codex_doc(path, _read(path))
    except SwarmforgeError as exc:
        return [Blocker("codex", exc.message, f"${{EDITOR:-vi}} {shlex.quote(path)}")]
    found = []
    key = trust_key(project_root)
    if _table(_table(doc, "projects"), key).get("trust_level") != "trusted":
        problem = f"{key} is not trusted ({path})"
        found.append(Blocker("codex", problem, "swarmforge trust --agent codex"))
    login = _codex_login_blocker(doc, env)
    return [*found, login] if login else found


def blockers(agent: str, project_root: str, env: Env) -> list[Blocker]:
    """What would stop `agent` from starting unattended in the project; [] when nothing."""
    if agent == "claude":
        return _claude_blockers(project_root, env)
    if agent == "codex":
        return _codex_blockers(project_root, env)
    raise SwarmforgeError(f"Unknown agent '{agent}' (expected one of {', '.join(AGENTS)})")


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


def _codex_render(path: str, text: str, doc: dict[str, Any], key: str) -> str:
    """`text` with `key` trusted: a table appended, or one line changed; checked by parsing."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if key not in _table(doc, "projects"):
        added = tomli_w.dumps({"projects": {key: {"trust_level": "trusted"}}})
        gap = "" if not text else newline if text.endswith("\n") else newline * 2
        new: str | None = text + gap + added.replace("\n", newline)
    else:
        lines = _retrusted(text.splitlines(keepends=True), key, newline)
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


def _diff(path: str, old: bytes | None, new: bytes) -> str:
    before = old.decode("utf-8").splitlines() if old is not None else []
    lines = difflib.unified_diff(
        before,
        new.decode("utf-8").splitlines(),
        "/dev/null" if old is None else path,
        path,
        lineterm="",
    )
    return "\n".join(lines) + "\n"


def plan_trust(agent: str, project_root: str, env: Env) -> Change | None:
    """The edit that makes `agent` trust the project (claude: and approve ANTHROPIC_API_KEY)."""
    key = trust_key(project_root)
    if agent == "claude":
        path = claude_config_path(env)
        old = _read(path)
        doc = _claude_doc(path, old)
        edited = _claude_edit(path, doc, key, env.get("ANTHROPIC_API_KEY", ""))
        if edited is doc:
            return None
        new = _claude_render(path, _text(path, old or b""), doc, edited).encode()
    elif agent == "codex":
        path = codex_config_path(env)
        old = _read(path)
        doc = _codex_doc(path, old)
        if _table(_table(doc, "projects"), key).get("trust_level") == "trusted":
            return None
        new = _codex_render(path, _text(path, old or b""), doc, key).encode()
    else:
        raise SwarmforgeError(f"Unknown agent '{agent}' (expected one of {', '.join(AGENTS)})")
    return Change(agent, path, old, new, _diff(path, old, new))


def apply(change: Change) -> None:
    """Write a planned change, unless the file changed since it was planned (then refuse)."""
    # Through a symbolic link (a dotfiles manager's), to the file it names, keeping the link.
    target = os.path.realpath(change.path)
    if _read(target) != change.old:
        raise SwarmforgeError(
            f"{change.path} changed since the change was planned; nothing was written to it.",
            hint="Run the command again (an agent that is running may be rewriting it).",
        )
    mode = NEW_FILE_MODE if change.old is None else stat.S_IMODE(os.stat(target).st_mode)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    atomic_write(target, change.new, mode=mode)
    # The umask may have narrowed the mode the new file was created with.
    os.chmod(target, mode)


def _write_new(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        raise SwarmforgeError(f"{path} exists: seed_home only makes a new, throw-away home.")
    atomic_write(path, data, mode=NEW_FILE_MODE)


def seed_home(
    home: str,
    project_root: str,
    *,
    api_key: str | None = None,
    codex_provider: Provider | None = None,
) -> SeededHome:
    """Make a throw-away home in which claude and codex start in `project_root` unasked.

    claude: onboarding done, the project trusted and, given `api_key` (the value it will
    see in ANTHROPIC_API_KEY), that key approved. codex: the project trusted, its managed
    daemon and update check off, and `codex_provider` as its model provider (it reads the
    key from `codex_provider.env_key`); without one but with `api_key`, codex is logged in
    with that key instead. Run the agents with `SeededHome.env()` added to their
    environment (HOME alone also works when CLAUDE_CONFIG_DIR and CODEX_HOME are unset).
    Refuses to replace a file that exists.
    """
    seeded = SeededHome(os.path.abspath(home))
    key = trust_key(project_root)
    claude: dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "projects": {key: {"hasTrustDialogAccepted": True}},
    }
    if api_key:
        claude["customApiKeyResponses"] = {"approved": [_key_suffix(api_key)], "rejected": []}
    codex: dict[str, Any] = {"check_for_update_on_startup": False}
    if codex_provider is not None:
        p = codex_provider
        codex |= {"model_provider": p.name, "model": p.model}
        entry = {"name": p.name, "base_url": p.base_url, "env_key": p.env_key}
        codex["model_providers"] = {p.name: {**entry, "wire_api": p.wire_api}}
    codex["features"] = {"daemon_auto_start": False}
    codex["projects"] = {key: {"trust_level": "trusted"}}
    _write_new(seeded.claude_config, json.dumps(claude, indent=2, ensure_ascii=False).encode())
    _write_new(os.path.join(seeded.codex_home, "config.toml"), tomli_w.dumps(codex).encode())
    if api_key and codex_provider is None:
        auth = {"auth_mode": "apikey", "OPENAI_API_KEY": api_key}
        _write_new(os.path.join(seeded.codex_home, "auth.json"), json.dumps(auth).encode())
    return seeded
