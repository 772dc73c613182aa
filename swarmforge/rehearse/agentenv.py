"""What points an agent of a rehearsal at its throw-away home and the scripted model, with
claude kept from any call beyond it."""

from __future__ import annotations

from swarmforge.agents.codex.trust import Provider
from swarmforge.agents.seed import seed_home

API_KEY = "sk-rehearsal-0000000000000000000000000000"
KEY_VARIABLE = "SWARMFORGE_REHEARSAL_KEY"
# claude makes no call beyond its model endpoint with these.
CLAUDE_OFFLINE = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
}


def agent_env(agent: str, home: str, project: str, base_url: str) -> dict[str, str]:
    """The environment that points one agent at its throw-away home and the scripted model."""
    provider = Provider(base_url=base_url, env_key=KEY_VARIABLE)
    seeded = seed_home(home, project, api_key=API_KEY, codex_provider=provider)
    env = {**seeded.env(), KEY_VARIABLE: API_KEY}
    if agent == "claude":
        env |= {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_OFFLINE}
    return env
