"""Finding the project from any directory inside it, and reading its role table (roles.tsv)."""

from __future__ import annotations

import os

from swarmforge import fsutil
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.layout import REMOTE_TSV, ROLES_TSV

ROLES_LIMIT = 1024 * 1024  # a line per role: far more than any swarm has
# What `locate` may take for the project, each a directory seen from where it looks.
SWARM = "swarm"  # a started swarm's root, which holds roles.tsv
CONFIG = "config"  # the nearest directory at or above with swarmforge/swarmforge.conf
CHECKOUT = "checkout"  # the top of the git worktree
HERE = "here"  # the directory itself
ANYWHERE = (SWARM, CONFIG, CHECKOUT)  # a project of any kind, as `doctor` looks for one
NOT_FOUND = "Cannot find SwarmForge project root"  # no swarm from here (tests match it)
# config/roster.CONFIG_FILE, which this layer cannot import.
_CONFIG_FILE = os.path.join("swarmforge", "swarmforge.conf")
RECEIVE_MODES = ("task", "batch")
BAD_ROLE_CHARS = frozenset("_/\\")
# A role's tmux session is `swarmforge-<role>`, and tmux rewrites '.' and ':' in
# session names and expands '#' formats in them: the session would not be found again.
SESSION_UNSAFE_CHARS = ".:#"
QUOTES = frozenset("\"'")
# The name becomes part of file names (prompts, logs, handoffs), branch and session
# names; well under the 255 bytes a file name may have, with room for what surrounds it.
MAX_NAME_BYTES = 64


def shown_name(name: str) -> str:
    """`name` quoted for a message, shortened when it is too long to read."""
    return f"'{name}'" if len(name) <= 40 else f"'{name[:32]}...' ({len(name)} characters)"


def name_too_long(name: str) -> bool:
    """True when `name` is longer than a role or worktree name may be."""
    return len(name.encode("utf-8")) > MAX_NAME_BYTES


NAME_LIMIT = f"at most {MAX_NAME_BYTES} characters ({MAX_NAME_BYTES} bytes of UTF-8)"


def role_name_problem(name: str) -> str | None:
    """Why `name` cannot be a role name, or None."""
    if not name:
        return "role name is empty"
    if any(c in QUOTES or c.isspace() for c in name):
        return f"role name {shown_name(name)}: role names cannot contain quotes or spaces"
    if any(c in BAD_ROLE_CHARS or not c.isprintable() for c in name):
        return f"role name '{name}' may not contain '_', '/', whitespace or control characters"
    if any(c in SESSION_UNSAFE_CHARS for c in name):
        return (
            f"role name {shown_name(name)} may not contain '.', ':' or '#' "
            f"(tmux would rename its session swarmforge-{name})"
        )
    if name_too_long(name):
        return f"role name {shown_name(name)} is too long: {NAME_LIMIT}"
    return None


class RoleEntry:
    """One line of roles.tsv: a role's row, as the helper scripts read it.

    A view of a role (`swarmforge/config/role.py`), made by `Role.entry` and nowhere
    else; a plain class, not a pydantic model, because the helpers must start fast.
    """

    __slots__ = ("agent", "display", "mode", "name", "path", "session", "worktree")

    def __init__(self, fields: list[str]) -> None:
        self.name, self.worktree, self.path, self.session, self.display, self.agent = fields[:6]
        self.mode = fields[6] if len(fields) > 6 and fields[6] else "task"

    def row(self) -> str:
        """This entry as a roles.tsv line."""
        return (
            "\t".join(
                (
                    self.name,
                    self.worktree,
                    self.path,
                    self.session,
                    self.display,
                    self.agent,
                    self.mode,
                )
            )
            + "\n"
        )


def git_dir_of(top: str) -> str | None:
    """The git dir of the worktree whose top is `top`: its `.git` directory, or where its
    `.git` file's `gitdir:` line points (relative to the file, as git 2.48's
    worktree.useRelativePaths writes it); None if it has neither."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8") as f:
            first = f.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not first.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(top, first.removeprefix("gitdir:").strip()))


def common_dir(git_dir: str) -> str:
    """The git dir shared by every worktree of the repository whose git dir is `git_dir`."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as f:
            return os.path.normpath(os.path.join(git_dir, f.read().strip()))
    except OSError:
        return git_dir


def worktree_top(start: str) -> str | None:
    """The top directory of the git worktree holding `start`, found the way git finds it."""
    here = os.path.abspath(start)
    while True:
        if _is_git(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _is_git(path: str) -> bool:
    """Whether `path` is a `.git` git would stop at: a directory with a HEAD, or a file
    naming one (`gitdir: ...`). An empty `.git` directory, such as a sandbox's mount point
    left in /tmp, is not one, and git walks on past it."""
    if os.path.isdir(path):
        return os.path.isfile(os.path.join(path, "HEAD"))
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"gitdir: "
    except OSError:
        return False


def locate(cwd: str, kinds: tuple[str, ...] = (SWARM,)) -> str | None:
    """The project seen from `cwd`: the first of `kinds` found, in their order (SWARM,
    CONFIG, CHECKOUT, HERE above); None if none is."""
    for kind in kinds:
        if kind == SWARM:
            found = _swarm_root(cwd)
        elif kind == CONFIG:
            found = _config_root(cwd)
        elif kind == CHECKOUT:
            found = worktree_top(cwd)
        else:
            found = os.path.abspath(cwd)
        if found is not None:
            return found
    return None


def find_root(cwd: str) -> str:
    """The root of the swarm seen from `cwd`, as SwarmForge's helpers find it."""
    found = _swarm_root(cwd)
    if found is None:
        raise SwarmforgeError(NOT_FOUND)
    return found


def _swarm_root(cwd: str) -> str | None:
    """`cwd`, its worktree's top or that worktree's main checkout: the first with roles.tsv."""
    if os.path.isfile(os.path.join(cwd, ROLES_TSV)):
        return cwd
    top = worktree_top(cwd)
    if top is not None:
        if os.path.isfile(os.path.join(top, ROLES_TSV)):
            return top
        git_dir = git_dir_of(top)
        if git_dir is not None:
            main = os.path.dirname(common_dir(git_dir))
            if os.path.isfile(os.path.join(main, ROLES_TSV)):
                return main
    return None


def _config_root(cwd: str) -> str | None:
    here = os.path.abspath(cwd)
    while not os.path.isfile(os.path.join(here, _CONFIG_FILE)):
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return here


def parse_roles(text: str, path: str) -> dict[str, RoleEntry]:
    """Parse roles.tsv text; CorruptFile names the line at fault."""
    roles: dict[str, RoleEntry] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if not 6 <= len(fields) <= 7:
            raise CorruptFile(path, number, f"expected 7 tab-separated columns, got {len(fields)}")
        problem = role_name_problem(fields[0])
        if problem:
            raise CorruptFile(path, number, problem)
        if fields[0] in roles:
            raise CorruptFile(path, number, f"duplicate role '{fields[0]}'")
        roles[fields[0]] = RoleEntry(fields)
    return roles


def read_roles(root: str) -> dict[str, RoleEntry]:
    """The role table of the project at `root`."""
    path = os.path.join(root, ROLES_TSV)
    try:
        # Never blocks on a FIFO put in its place, nor reads a huge file whole.
        data = fsutil.read_regular(path, limit=ROLES_LIMIT)
    except FileNotFoundError:
        raise SwarmforgeError("Cannot find SwarmForge project root") from None
    except (fsutil.NotRegularFile, fsutil.FileTooLarge) as exc:
        raise CorruptFile(path, None, str(exc.strerror)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFile(path, data[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None
    return parse_roles(text, path)


def read_remote(root: str) -> dict[str, str]:
    """The roles of the project at `root` that another host runs, with that host's name
    ("" for the host started without --host); empty on one machine."""
    path = os.path.join(root, REMOTE_TSV)
    try:
        data = fsutil.read_regular(path, limit=ROLES_LIMIT)
    except FileNotFoundError:
        return {}
    except (fsutil.NotRegularFile, fsutil.FileTooLarge) as exc:
        raise CorruptFile(path, None, str(exc.strerror)) from None
    found: dict[str, str] = {}
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 2 or role_name_problem(fields[0]):
            raise CorruptFile(path, number, "expected a role name, a TAB and a host name")
        found[fields[0]] = fields[1]
    return found
