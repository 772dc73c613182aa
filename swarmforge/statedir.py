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
is for the helpers, the agents and people. `ensure` checks a view on every use and heals
it: one deleted is made again; a link pointing elsewhere, a file or a directory put in
its place is moved aside whole (to `set-aside/` in the state, never read as state) and
the link made again; an older version's state directory found in its place, with no
state yet in the git directory, is moved there. Each heal is an event in the log.

Where no git directory holds the checkout (a plain directory) or a worktree lies
outside `.worktrees/`, the state stays in the checkout's `.swarmforge/`, as it is.

The helpers import this module: it uses `os` alone (no pathlib, no subprocess).
"""

from __future__ import annotations

import os

from swarmforge.layout import STATE_DIR, WORKTREES_DIR

STATE_NAME = "swarmforge"  # the state's directory in the common git directory
CHECKOUTS = "checkouts"  # under it: each worktree's own state, by the worktree's name
SET_ASIDE = "set-aside"  # under it: what was found in a view's place, kept whole
VIEW_MADE = ".view-made"  # in a state directory: its view was made once (a later making heals)

_DIR_MODE = 0o755

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
        if not os.path.isdir(real) and _is_real_dir(os.path.join(top, STATE_DIR)):
            ensure(top)
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


def ensure(top: str) -> str | None:
    """Check the view of the checkout at `top` and heal it; what was healed, or None.

    A checkout that is gone is never made again here; its state stays where it lies.
    """
    found = placed(top)
    if found is None:
        return None
    real, text = found
    view = os.path.join(os.path.abspath(top), STATE_DIR)
    try:
        if os.readlink(view) == text:
            return None
    except FileNotFoundError:
        pass
    except OSError:  # EINVAL: something other than a link stands there
        pass
    if not os.path.isdir(top):
        return None
    return _heal(top, view, real, text)


def _heal(top: str, view: str, real: str, text: str) -> str | None:
    if os.path.islink(real):
        return None  # not what swarmforge makes: never followed (Mailbox refuses it too)
    kept = ""
    if not os.path.isdir(real):
        if not _is_real_dir(view) or _tracked(top):
            # No state yet: nothing to show; and a `.swarmforge/` a commit brought is no
            # state of ours (it is set aside once `up` has made the state).
            return None
        _makedirs(os.path.dirname(real))
        try:
            os.rename(view, real)  # an older version's state: it is the state
        except OSError:
            return None  # taken by another healer meanwhile: looked at again next use
        what = "moved into the git directory"
    elif os.path.lexists(view):
        kept = _set_aside(view, real)
        if not kept:
            return None
        what = "replaced"
    else:
        # The view's first making is no heal: only one made before and gone since is.
        what = "deleted" if os.path.lexists(os.path.join(real, VIEW_MADE)) else ""
    _makedirs(real)
    link = os.path.join(os.path.dirname(view), f".{STATE_DIR}.{os.getpid()}.link.tmp")
    try:
        try:
            os.unlink(link)
        except FileNotFoundError:
            pass
        os.symlink(text, link)
        os.rename(link, view)  # never over a directory: put there since, looked at next use
    except OSError:
        try:
            os.unlink(link)
        except OSError:
            pass
        return None
    if not os.path.lexists(os.path.join(real, VIEW_MADE)):
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            os.close(os.open(os.path.join(real, VIEW_MADE), flags, 0o644))
        except OSError:
            pass
    if not what:
        return None
    _record(top, real, what, kept)
    return what


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


def _set_aside(view: str, real: str) -> str:
    """Move what stands at `view` under the state's `set-aside/`; where, or "" if it could not."""
    from swarmforge import times  # only on a heal: not on the helpers' start-up path

    main_state = real.split(os.sep + CHECKOUTS + os.sep)[0]
    name = os.path.basename(os.path.dirname(view))
    target = os.path.join(main_state, SET_ASIDE, f"{name}-{times.compact(micro=True)}")
    try:
        _makedirs(os.path.dirname(target))
        os.rename(view, target)
    except OSError:
        return ""
    return target


def _makedirs(directory: str) -> None:
    if os.path.isdir(directory):
        return
    _makedirs(os.path.dirname(directory))
    try:
        os.mkdir(directory, _DIR_MODE)
    except FileExistsError:
        pass


def _record(top: str, real: str, what: str, kept: str) -> None:
    from swarmforge import events  # only on a heal

    main_state = real.split(os.sep + CHECKOUTS + os.sep)[0]
    log = events.EventLog(os.path.dirname(os.path.dirname(main_state)))
    log.emit("state-view-healed", {"checkout": top, "found": what, "set_aside": kept or None})
