"""Reading the role table of a started swarm, `roles.tsv` (and a role's receive mode from
it), and its remote roles (`remote.tsv`)."""

from __future__ import annotations

from swarmforge import fsutil, projectroot, statedir
from swarmforge.errors import CorruptFile, Refused, SwarmforgeError
from swarmforge.layout import REMOTE_TSV, ROLES_TSV
from swarmforge.rolenames import role_name_problem

ROLES_LIMIT = 1024 * 1024  # a line per role: far more than any swarm has
RECEIVE_MODES = ("task", "batch")


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
    path = statedir.path(root, ROLES_TSV)
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


def receive_mode(cwd: str, role: str) -> str:
    """The receive mode, `task` or `batch`, that roles.tsv gives `role` (the caller's role,
    working in `cwd`)."""
    if not role:
        raise SwarmforgeError("Set SWARMFORGE_ROLE.")
    entry = read_roles(projectroot.find_root(cwd)).get(role)
    if entry is None:
        raise SwarmforgeError(f"Unknown role: {role}")
    if entry.mode not in RECEIVE_MODES:
        raise Refused(f"INVALID_RECEIVE_MODE: {entry.mode} for role {role}")
    return entry.mode


def read_remote(root: str) -> dict[str, str]:
    """The roles of the project at `root` that another host runs, with that host's name
    ("" for the host started without --host); empty on one machine."""
    path = statedir.path(root, REMOTE_TSV)
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
