"""`doctor`: what a swarm needs (tools, configuration, project state), checked one by one.

Every check is a plain function returning a `Check`; none prints, none raises
for a problem it finds (a problem is a `warn` or `FAIL` result with a fix).

In a project (a git checkout, a directory with a swarmforge.conf, or one named with
`--project`), a missing swarmforge.conf is a FAIL: `up` cannot start there. Outside
any project it is only a warning, so `doctor` can check the tools before `init`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from swarmforge import proc
from swarmforge.agents import trust
from swarmforge.agents.commands import find_executable
from swarmforge.config import sessionrecord, settings
from swarmforge.config.conf import CONFIG_FILE, CONSTITUTION_FILE, parse_config, role_prompt_path
from swarmforge.config.prompts import shipped_roles_dir
from swarmforge.config.roster import RoleSpec, SwarmConfig
from swarmforge.daemon import handoffd
from swarmforge.daemon.dispatcher import Paths
from swarmforge.doctor.check import Check, Status
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.git import command
from swarmforge.layout import SESSION_RECORD, STATE_DIRS
from swarmforge.roletable import find_root, worktree_top

if TYPE_CHECKING:
    from swarmforge.net.transport import Transport

PYTHON_MINIMUM = (3, 11)
GIT_MINIMUM = (2, 31)  # `git worktree list --porcelain` prints `prunable` lines since 2.31
TMUX_MINIMUM = (3, 2)  # `new-session -e` (a role's environment) exists since 3.2


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in version)


def check_python(version: tuple[int, ...] | None = None) -> Check:
    """The Python running swarmforge is recent enough."""
    found = tuple(sys.version_info[:3]) if version is None else version
    if found[:2] < PYTHON_MINIMUM:
        want = _dotted(PYTHON_MINIMUM)
        fix = f"install swarmforge with Python {want} or later"
        return Check("python", "FAIL", f"Python {_dotted(found)} is older than {want}", fix)
    return Check("python", "ok", f"Python {_dotted(found)} ({sys.executable})")


def _probe(name: str, flag: str) -> tuple[str | None, str]:
    """(path, version output) of tool `name`; the path is None when it is not on PATH."""
    exe = proc.which(name)
    if exe is None:
        return None, ""
    try:
        result = proc.run([exe, flag])
    except (OSError, SwarmforgeError):
        return exe, ""
    return exe, result.stdout.decode(errors="replace").strip() if result.ok else ""


def _tool(name: str, flag: str, minimum: tuple[int, int], need: str, bad: Status) -> Check:
    exe, said = _probe(name, flag)
    want = _dotted(minimum)
    if exe is None:
        return Check(name, bad, f"{name} not found on PATH", f"install {name} {want} or later")
    found = re.search(r"(\d+)\.(\d+)", said)
    if found is None:
        fix = f"make sure it is {name} {want} or later, needed for {need}"
        return Check(name, "warn", f"cannot read the version of {exe} from {said!r}", fix)
    version = (int(found[1]), int(found[2]))
    if version < minimum:
        fix = f"upgrade {name} to {want} or later"
        return Check(name, bad, f"{said} ({exe}) is older than {want}, needed for {need}", fix)
    return Check(name, "ok", f"{said} ({exe})")


def check_git() -> Check:
    """git is on PATH and recent enough for the worktree commands swarmforge runs."""
    return _tool("git", "--version", GIT_MINIMUM, "`git worktree list --porcelain`", "FAIL")


def check_tmux() -> Check:
    """tmux is on PATH and recent enough; only a warning, since the headless backend needs none."""
    found = _tool("tmux", "-V", TMUX_MINIMUM, "`tmux new-session -e`", "warn")
    if found.status == "ok":
        return found
    return replace(
        found,
        detail=found.detail + " (only the tmux backend needs it)",
        fix=found.fix + ", or use `swarmforge up --backend headless`",
    )


def check_config(root: str, in_project: bool = True) -> tuple[Check, SwarmConfig | None]:
    """swarmforge/swarmforge.conf exists and parses; the config, if it does. Outside any
    project (`in_project` False) a missing one is only a warning."""
    path = os.path.join(root, CONFIG_FILE)
    if not os.path.isfile(path):
        if not in_project:
            detail = f"no {CONFIG_FILE}, and no project here (no git checkout)"
            return Check("config", "warn", detail, "run `swarmforge init DIR` to make one"), None
        fix = "`swarmforge up` cannot start without it: run `swarmforge init`"
        return Check("config", "FAIL", f"no {CONFIG_FILE}", fix), None
    try:
        # utf-8-sig as load_config reads it: an editor's byte-order mark is not content.
        with open(path, encoding="utf-8-sig") as f:
            config = parse_config(f.read(), path)
    except UnicodeDecodeError:
        return Check("config", "FAIL", f"{path}: not valid UTF-8", "save it as UTF-8"), None
    except SwarmforgeError as exc:
        return Check("config", "FAIL", exc.message, f"fix {CONFIG_FILE}"), None
    return Check("config", "ok", f"{path}: {len(config.roles)} role(s)"), config


def _role_dir(root: str, role: RoleSpec) -> str:
    # Before `up` the worktree does not exist; it will be a checkout of the project.
    path = role.worktree_path(root)
    return path if os.path.isdir(path) else root


def check_agent(root: str, role: RoleSpec, path: str | None = None) -> Check:
    """The command role `role` runs (its agent, or an exec role's argv[0]) can be found."""
    command = role.extra_args[0] if role.is_exec else role.agent
    where = _role_dir(root, role)
    name = f"role {role.name}"
    found = find_executable(command, path=path, cwd=where)
    if found is not None:
        return Check(name, "ok", f"{command}: {found}")
    if role.is_exec:
        place = f"in {where}" if "/" in command else "on PATH"
        fix = f"create it (executable) or change role '{role.name}' in {CONFIG_FILE}"
        return Check(
            name, "FAIL", f"exec command '{command}' of role '{role.name}' not found {place}", fix
        )
    fix = f"install '{command}' or change the agent of role '{role.name}' in {CONFIG_FILE}"
    return Check(name, "FAIL", f"agent '{command}' of role '{role.name}' not found on PATH", fix)


def check_agent_start(root: str, agent: str, env: Mapping[str, str]) -> Check:
    """`agent` (claude or codex) can start in the project without asking anything."""
    try:
        found = trust.blockers(agent, root, env)
    except SwarmforgeError as exc:
        return Check(agent, "FAIL", exc.message, exc.hint or "set HOME")
    if found:
        fixes = dict.fromkeys(f"`{b.fix}`" for b in found)
        detail = f"would not start unattended: {'; '.join(b.problem for b in found)}"
        return Check(agent, "FAIL", detail, f"run {' then '.join(fixes)}")
    return Check(agent, "ok", f"starts unattended in {trust.trust_key(root)}")


def check_prompts(root: str, config: SwarmConfig) -> Check:
    """The constitution and the prompt of every agent role are present."""
    wanted = [os.path.join(root, CONSTITUTION_FILE)]
    wanted += [role_prompt_path(root, r.name) for r in config.roles if not r.is_exec]
    missing = [os.path.relpath(p, root) for p in wanted if not os.path.isfile(p)]
    if missing:
        fix = f"write them (shipped ones are in {shipped_roles_dir()})"
        return Check("prompts", "FAIL", f"missing {', '.join(missing)}", fix)
    return Check("prompts", "ok", f"constitution and {len(wanted) - 1} role prompt(s) present")


def check_repository(root: str) -> Check:
    """The project is a git checkout with a commit (`up` makes both, so only a warning)."""
    from swarmforge.git import repo

    checkout = repo.open_checkout(root)
    if checkout is None:
        if os.path.lexists(os.path.join(root, ".git")):
            fix = "repair or remove it"
            return Check(
                "repository", "FAIL", f"{root}/.git exists but is not a usable git checkout", fix
            )
        fix = "`swarmforge up` runs `git init` here and commits what is here"
        return Check("repository", "warn", f"{root} is not the top of a git repository", fix)
    if checkout.head is None:
        fix = "`swarmforge up` will make a first commit"
        return Check("repository", "warn", "the repository has no commit yet", fix)
    branch = (checkout.head_ref or "detached HEAD").removeprefix("refs/heads/")
    return Check("repository", "ok", f"{checkout.workdir} at {checkout.head[:10]} ({branch})")


# The project's own state: never content of the repository (a commit could then replace it).


def check_tracked_state(root: str) -> Check:
    """Git tracks nothing under `.swarmforge/` or `.worktrees/` in the project."""
    try:
        result = command.run(root, "ls-files", "-z", "--", *STATE_DIRS)
    except SwarmforgeError:
        return Check("tracked", "ok", "no git to ask")
    if not result.ok:
        return Check("tracked", "ok", "not a git checkout")
    paths = [p for p in result.stdout.decode(errors="replace").split("\0") if p]
    dirs = sorted({p.split("/", 1)[0] for p in paths})
    if dirs:
        detail = f"git tracks {len(paths)} file(s) under {', '.join(d + '/' for d in dirs)}"
        fix = f"run `git rm -r --cached {' '.join(dirs)}` and commit: no commit may carry them"
        return Check("tracked", "FAIL", detail, fix)
    return Check("tracked", "ok", f"git tracks nothing under {', '.join(STATE_DIRS)}")


def check_daemon(root: str) -> Check:
    """The delivery daemon runs, or at least left no stale pid file behind."""
    paths = Paths(root)
    pid = handoffd.running_pid(paths)
    if pid is not None:
        return Check("daemon", "ok", f"running (pid {pid})" if pid else "starting")
    if os.path.lexists(paths.pid):
        gone = f"process {handoffd.read_pid(paths) or '?'} is gone"
        fix = "`swarmforge gc` cleans it"
        return Check("daemon", "warn", f"not running, but {paths.pid} remains ({gone})", fix)
    return Check("daemon", "ok", "not running")


def _live(root: str, record: sessionrecord.SessionRecord) -> bool:
    from swarmforge.swarm.teardown import is_running

    try:
        return is_running(root, record)
    except SwarmforgeError:
        return False  # no tmux to ask: none of the run's sessions can be alive


def check_run(root: str) -> list[Check]:
    """The session record: its state, and whether its roles' worktrees exist."""
    try:
        record = sessionrecord.load(root)
    except CorruptFile as exc:
        return [Check("run", "FAIL", exc.message, f"repair or remove {SESSION_RECORD}")]
    if record is None:
        return [Check("run", "ok", "no swarm run recorded yet")]
    detail = f"run {record.run_id}: {record.state} ({record.backend})"
    run = Check("run", "ok", detail)
    if record.state == "running" and not _live(root, record):
        fix = "`swarmforge gc` cleans up; `swarmforge up` resumes the run"
        run = Check("run", "warn", detail + ", but its processes are gone", fix)
    missing = [r.name for r in record.roles if not os.path.isdir(r.path)]
    trees = Check("worktrees", "ok", f"all {len(record.roles)} present")
    if missing:
        fix = "`swarmforge gc` prunes them; the next `swarmforge up` checks them out again"
        trees = Check("worktrees", "warn", f"missing for role(s) {', '.join(missing)}", fix)
    return [run, trees]


def check_ports(root: str) -> Check:
    """No process other than a role's own listens on a port the run gave that role."""
    try:
        record = sessionrecord.load(root)
    except CorruptFile:
        return Check("ports", "ok", "no session record to read (see the run check)")
    if record is None:
        return Check("ports", "ok", "no swarm run recorded yet")
    from swarmforge.swarm.portholders import port_holders

    held = port_holders(root, record)
    if not held:
        count = len(record.roles)
        return Check("ports", "ok", f"none of the {count} role port(s) is held by another process")
    ports = {r.name: r.port for r in record.roles}
    found = [f"role {n}: port {ports[n]} held by {_holder(h.pid, h.name)}" for n, h in held.items()]
    fix = "stop that process, or `swarmforge down` then `up`: the role then gets the next free port"
    return Check("ports", "warn", "; ".join(found), fix)


def check_transport(root: str, env: Mapping[str, str] | None = None) -> Check | None:
    """With `[transport]` set: the NATS server answers, has JetStream, and holds the
    project's stream as every host expects it. None without `[transport]`."""
    try:
        transport = settings.load_settings(root).transport
    except CorruptFile as exc:
        return Check("transport", "FAIL", exc.message, f"fix {settings.SETTINGS_FILE}")
    if transport is None:
        return None
    try:
        from swarmforge.net.failure import TransportError
        from swarmforge.net.transport import Transport
    except ImportError:
        fix = "install the nats extra: pip install 'swarmforge[nats]'"
        return Check("transport", "FAIL", "[transport] is set but nats-py is missing", fix)
    client = Transport.from_settings(transport, root, env)
    try:
        client.connect()
        return _transport_state(client)
    except TransportError as exc:
        fix = f"start the NATS server at {transport.url}, or correct [transport] and its login"
        return Check("transport", "FAIL", exc.message, fix)
    finally:
        client.close()


def _transport_state(client: Transport) -> Check:
    """What the connected server holds for the project."""
    from swarmforge.net.mailstream import config_problems
    from swarmforge.net.subjects import stream_name

    name = stream_name(client.project)
    if not client.jetstream_enabled():
        fix = "start nats-server with JetStream (-js, or jetstream {} in its configuration)"
        return Check("transport", "FAIL", f"{client.url} answers but has no JetStream", fix)
    info = client.stream_info()
    if info is None:
        detail = f"{client.url} with JetStream; the stream {name} does not exist yet"
        return Check("transport", "warn", detail, "it is made when mail first crosses hosts")
    problems = config_problems(info.config, client.project)
    if problems:
        fix = f"remove the stream {name} (nats stream rm {name}) so that it is made again"
        return Check("transport", "FAIL", f"stream {name}: {'; '.join(problems)}", fix)
    return Check("transport", "ok", f"{client.url} with JetStream, stream {name} as expected")


def _holder(pid: int | None, name: str | None) -> str:
    who = f"pid {pid}" if pid is not None else "a process of another user"
    return f"{who} ({name})" if name else who


def locate_project(cwd: str) -> str | None:
    """The project seen from `cwd`: a swarm's, one with a config, or the checkout; None
    outside any project."""
    try:
        return find_root(cwd)
    except SwarmforgeError:
        pass
    here = os.path.abspath(cwd)
    while not os.path.isfile(os.path.join(here, CONFIG_FILE)):
        parent = os.path.dirname(here)
        if parent == here:
            return worktree_top(cwd)
        here = parent
    return here


def find_project(cwd: str) -> str:
    """The project seen from `cwd`, or `cwd` itself outside any project."""
    return locate_project(cwd) or os.path.abspath(cwd)
