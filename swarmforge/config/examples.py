"""The TOML files `init` writes for a pack: its settings, and an example rehearsal script.

Both are made for the pack's own roles and rendered with tomli-w, under a
comment that says what the file is for.
"""

from __future__ import annotations

from pathlib import Path

import tomli_w

from swarmforge.config.roster import RoleSpec, SwarmConfig
from swarmforge.layout import DRAFTS_DIR, SWARMFORGE_DIR

REHEARSAL_FILE = Path(SWARMFORGE_DIR, "rehearse.toml")
REHEARSED = ("claude", "codex")

SETTINGS_HEAD = """\
# swarmforge settings that swarmforge.conf (SwarmForge's format) has no word for.
# Per role:
#   restart = "on-failure" | "never"   restart an agent that exits with an error, with
#                                      growing pauses (1, 2, 4 ... 30 s), or leave it down
#   allow_helpers = true | false       claude: the swarm's helper scripts run without
#                                      asking for approval each time

"""

REHEARSAL_HEAD = """\
# An example rehearsal: `swarmforge rehearse swarmforge/rehearse.toml` runs this swarm
# with the real agent CLIs against a scripted model, on a throw-away copy of the
# project, offline and for free. Each role plays its turns in order: turn 1 answers
# the agent's opening prompt, every later turn the next message it gets (a wake-up).
# Each string of `run` is one call of the agent's shell tool, in the role's worktree,
# inside the agent's own sandbox, as in the real swarm. `expect` is checked when the
# turn ends: `output` (text the commands printed), `sent` (roles it queued a handoff
# to), `completed` (handoffs it completed). The turns keep the constitution's rules:
# drafts in tmp/, the commit taken from ready_for_next.sh's `merge_and_process` line,
# nothing under .swarmforge/ read or written.

"""

# The commit of the git handoff in process, from ready_for_next.sh's printout, which
# prints the item in process again when asked again.
_HANDED_COMMIT = "ready_for_next.sh | sed -n 's/^merge_and_process [^ ]* //p' | head -n 1"
DRAFTS = DRAFTS_DIR


def settings(config: SwarmConfig) -> bytes:
    """swarmforge.toml with every role's default settings written out."""
    roles: dict[str, dict[str, object]] = {}
    for role in config.roles:
        entry: dict[str, object] = {"restart": "on-failure"}
        if role.agent == "claude":
            entry["allow_helpers"] = True
        roles[role.name] = entry
    return (SETTINGS_HEAD + tomli_w.dumps({"roles": roles})).encode()


def _pair(config: SwarmConfig) -> tuple[RoleSpec, RoleSpec] | None:
    """The roles of the example: one that commits and hands its commit on, and one that
    takes it. The one that commits is the coder if there is one, else the first agent
    role; the other is the next agent role in a worktree of its own (it merges the
    commit), else the next agent role."""
    cast = [r for r in config.roles if r.agent in REHEARSED]
    if len(cast) < 2:
        return None
    first = next((r for r in cast if r.name == "coder"), cast[0])
    rest = [r for r in cast if r is not first]
    second = next((r for r in rest if not r.in_main_checkout), rest[0])
    return first, second


def _draft(path: str, headers: str, last: str | None = None) -> str:
    """A command that writes a handoff draft with printf, ending with the file `last` if
    given, then hands it to the gate. (No command substitution in quotes: claude asks a
    person before a command whose quoted text it cannot check.)"""
    write = [
        "printf",
        f"'{headers}'",
        ">",
        path,
        *(["&&", "cat", last, ">>", path] if last else []),
    ]
    return " ".join(["mkdir", "-p", DRAFTS, "&&", *write, "&&", "swarm_handoff.sh", path])


def rehearsal(config: SwarmConfig) -> bytes:
    """An example script: one role commits and hands the commit on, the next merges and answers."""
    pair = _pair(config)
    roles: dict[str, object] = {}
    if pair is not None:
        maker, taker = pair
        handoff = f"type: git_handoff\\nto: {taker.name}\\npriority: 50\\ntask: greeting\\ncommit: "
        commit = f"{DRAFTS}/greeting.commit"
        roles[maker.name] = {
            "turns": [
                {
                    "run": [
                        "echo 'hello from the rehearsal' > greeting.txt && git add greeting.txt"
                        " && git commit -q -m 'Add a greeting' && git log --oneline -1",
                        f"mkdir -p {DRAFTS} && git rev-parse --short=10 HEAD > {commit}",
                        _draft(f"{DRAFTS}/greeting.draft", handoff, commit),
                    ],
                    "say": f"Committed the greeting and handed it to {taker.name}.",
                    "expect": {"output": ["HANDOFF QUEUED"], "sent": [taker.name]},
                },
                {
                    "run": ["ready_for_next.sh", "done_with_current.sh"],
                    "say": "Read the answer.",
                    "expect": {"output": [f"FROM: {taker.name}"], "completed": 1},
                },
            ]
        }
        # A role in the main checkout reads the commit; one in a worktree merges it.
        verb = "read" if taker.in_main_checkout else "merged"
        take = (
            f'git show "$({_HANDED_COMMIT})":greeting.txt'
            if taker.in_main_checkout
            else f'git merge --no-edit "$({_HANDED_COMMIT})" && cat greeting.txt'
        )
        note = f"type: note\\nto: {maker.name}\\npriority: 50\\nmessage: {verb} the greeting\\n"
        roles[taker.name] = {
            "turns": [
                {"say": "Waiting for handoffs."},
                {
                    "run": [
                        "ready_for_next.sh",
                        take,
                        _draft(f"{DRAFTS}/answer.draft", note),
                        "done_with_current.sh",
                    ],
                    "say": f"Took the greeting and told {maker.name}.",
                    "expect": {
                        "output": [f"merge_and_process {maker.name}", "hello from the rehearsal"],
                        "sent": [maker.name],
                        "completed": 1,
                    },
                },
            ]
        }
    for role in config.roles:
        if role.agent in REHEARSED and role.name not in roles:
            roles[role.name] = {"turns": [{"say": "Waiting for handoffs."}]}
    document = {"timeout": 300, "roles": roles}
    return (REHEARSAL_HEAD + tomli_w.dumps(document)).encode()
