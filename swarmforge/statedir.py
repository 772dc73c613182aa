"""Where swarmforge's state really lies, and each checkout's `.swarmforge` view of it.

The state lives in the repository's common git directory, `<common>/swarmforge/`, where
no git command run in a checkout reaches: `clean -fdx`, `reset --hard`, `stash --all`,
`checkout` of a branch that tracks `.swarmforge/`, `worktree remove` only ever touch a
worktree's files and git's own records. It moves and goes with the repository, and lies
on the worktrees' file system.

- The main checkout's state (session record, events, daemon, logs, runs, its mailbox)
  is `<common>/swarmforge/`.
- A worktree's under `.worktrees/<name>` (its mailbox) is
  `<common>/swarmforge/checkouts/<name>/`.

Each checkout keeps SwarmForge's paths as a view: `.swarmforge` there is a symbolic link
to its state (relative, so that the project can be moved). swarmforge itself always
reads and writes the state where it lies (`of`, `path`), never through a view; a view
is for the helpers, the agents and people, and stateview.py heals it. An older
version's state directory found in a view's place, with no state yet in the git
directory and nothing in it that git tracks, is moved there (`move_in`).

Where no git directory holds the checkout (a plain directory) or a worktree lies
outside `.worktrees/`, the state stays in the checkout's `.swarmforge/`, as it is.

The helpers import this module: it uses `os` alone (no pathlib, no subprocess).
"""

from __future__ import annotations

import os

from swarmforge import filewrite, fsutil
from swarmforge.layout import STATE_DIR, WORKTREES_DIR

STATE_NAME = "swarmforge"  # the state's directory in the common git directory
CHECKOUTS = "checkouts"  # under it: each worktree's own state, by the worktree's name
SET_ASIDE = "set-aside"  # under it: what was found in a view's place, kept whole
VIEW_MADE = ".view-made"  # in a state directory: its view was made once (a later making heals)

# top -> (its state, the view's link text), for the checkouts whose state was found placed.
_placed: dict[str, tuple[str, str]] = {}


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


def placed(top: str) -> tuple[str, str] | None:
    """(the state's directory, the view's link text) of the checkout at `top`; None where
    the state stays in the checkout itself."""
    top = os.path.abspath(top)
    if top in _placed:
        return _placed[top]
    found = _place(top)
    if found is not None:
        _placed[top] = found
    return found


def _place(top: str) -> tuple[str, str] | None:
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):  # the main checkout
        return os.path.join(dot_git, STATE_NAME), os.path.join(".git", STATE_NAME)
    parent = os.path.dirname(top)
    if os.path.basename(parent) != WORKTREES_DIR:
        return None
    # A role's worktree, `<main>/.worktrees/<name>`: placed by where it lies, so that a
    # worktree whose `.git` file or registration is gone still finds its state.
    main = os.path.dirname(parent)
    if not os.path.isdir(os.path.join(main, ".git")):
        return None
    name = os.path.basename(top)
    real = os.path.join(main, ".git", STATE_NAME, CHECKOUTS, name)
    return real, os.path.join("..", "..", ".git", STATE_NAME, CHECKOUTS, name)


def of(top: str) -> str:
    """The directory that holds the state of the checkout at `top` (see the module).

    An older version's state directory in the checkout, with none in the git directory
    yet, is moved there first (nothing else is made here: a look at a project that has
    no swarm leaves it as it was).
    """
    found = placed(top)
    if found is None:
        return os.path.join(os.path.abspath(top), STATE_DIR)
    real = found[0]
    if real not in _seen:
        if not os.path.isdir(real):
            move_in(top)
        if os.path.isdir(real):
            _seen.add(real)
    return real


_seen: set[str] = set()  # state directories found in place: not looked for again


def _is_real_dir(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def path(root: str, name: str) -> str:
    """Where layout path `name` (`.swarmforge/...`) of the project at `root` really lies."""
    if name == STATE_DIR:
        return of(root)
    return os.path.join(of(root), name[len(STATE_DIR) + 1 :])


def checkout_of(state: str) -> str | None:
    """The checkout whose state holds `state` (a path at or under one state directory)."""
    parts = os.path.abspath(state).split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == STATE_DIR:
            return os.sep.join(parts[:i]) or os.sep
        if parts[i] == STATE_NAME and parts[i - 1] == ".git":
            main = os.sep.join(parts[: i - 1]) or os.sep
            if len(parts) > i + 2 and parts[i + 1] == CHECKOUTS:
                return os.path.join(main, WORKTREES_DIR, parts[i + 2])
            return main
    return None


def own_view(top: str) -> bool:
    """True when the checkout's `.swarmforge` is exactly the view swarmforge makes."""
    found = placed(top)
    try:
        return found is not None and os.readlink(os.path.join(top, STATE_DIR)) == found[1]
    except OSError:  # none, or something other than a link
        return False


def move_in(top: str) -> bool:
    """Move an older version's state directory, in the checkout at `top`, to where the state
    lies, and make the view; True if it was moved. Only a real directory with no state in
    the git directory yet, and nothing in it that git tracks, is taken for state."""
    found = placed(top)
    if found is None:
        return False
    real, text = found
    view = os.path.join(os.path.abspath(top), STATE_DIR)
    if os.path.lexists(real) or not _is_real_dir(view) or _tracked(top):
        return False
    fsutil.makedirs(os.path.dirname(real))
    try:
        os.rename(view, real)
    except OSError:
        return False  # taken by another meanwhile: looked at again next use
    make_view(view, real, text)
    return True


def make_view(view: str, real: str, text: str) -> bool:
    """Put the link `text` at `view` for the state at `real`, in one rename (never over a
    directory: one put there meanwhile is looked at on the next use); True if made."""
    fsutil.makedirs(real)
    link = filewrite.temp_name(view)
    try:
        os.symlink(text, link)
        os.rename(link, view)
    except OSError:
        try:
            os.unlink(link)
        except OSError:
            pass
        return False
    if not os.path.lexists(os.path.join(real, VIEW_MADE)):
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            os.close(os.open(os.path.join(real, VIEW_MADE), flags, fsutil.FILE_MODE))
        except OSError:
            pass
    return True


def _tracked(top: str) -> bool:
    """Whether git may track anything under the checkout's `.swarmforge/`: its index names
    such a path (looked for in the index's bytes, without git: this module is on the
    helpers' start-up path; an index that cannot be read counts as tracking it)."""
    git_dir = git_dir_of(top)
    if git_dir is None:
        return False
    try:
        with open(os.path.join(git_dir, "index"), "rb") as f:
            return f"{STATE_DIR}/".encode() in f.read()
    except FileNotFoundError:
        return False
    except OSError:
        return True
