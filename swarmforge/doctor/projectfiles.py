"""The project's own files: swarmforge.conf, the constitution and the roles' prompts.

In a project (a git checkout, a directory with a swarmforge.conf, or one named with
`--project`), a missing swarmforge.conf is a FAIL: `up` cannot start there. Outside
any project it is only a warning, so `doctor` can check the tools before `init`.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.config.conf import parse_config, role_prompt_path
from swarmforge.config.prompts import shipped_roles_dir
from swarmforge.config.roster import CONSTITUTION_FILE, SwarmConfig
from swarmforge.doctor.check import Check
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import CONFIG_FILE


def check_config(root: str, in_project: bool = True) -> tuple[Check, SwarmConfig | None]:
    """swarmforge/swarmforge.conf exists and parses; the config, if it does. Outside any
    project (`in_project` False) a missing one is only a warning."""
    path = Path(root, CONFIG_FILE)
    if not path.is_file():
        if not in_project:
            detail = f"no {CONFIG_FILE}, and no project here (no git checkout)"
            return Check("config", "warn", detail, "run `swarmforge init DIR` to make one"), None
        fix = "`swarmforge up` cannot start without it: run `swarmforge init`"
        return Check("config", "FAIL", f"no {CONFIG_FILE}", fix), None
    try:
        # utf-8-sig as load_config reads it: an editor's byte-order mark is not content.
        config = parse_config(path.read_text(encoding="utf-8-sig"), str(path))
    except UnicodeDecodeError:
        return Check("config", "FAIL", f"{path}: not valid UTF-8", "save it as UTF-8"), None
    except SwarmforgeError as exc:
        return Check("config", "FAIL", exc.message, f"fix {CONFIG_FILE}"), None
    return Check("config", "ok", f"{path}: {len(config.roles)} role(s)"), config


def check_prompts(root: str, config: SwarmConfig) -> Check:
    """The constitution and the prompt of every agent role are present."""
    wanted = [Path(root, CONSTITUTION_FILE)]
    wanted += [Path(role_prompt_path(root, r.name)) for r in config.roles if not r.is_exec]
    missing = [os.path.relpath(p, root) for p in wanted if not p.is_file()]
    if missing:
        fix = f"write them (shipped ones are in {shipped_roles_dir()})"
        return Check("prompts", "FAIL", f"missing {', '.join(missing)}", fix)
    return Check("prompts", "ok", f"constitution and {len(wanted) - 1} role prompt(s) present")
