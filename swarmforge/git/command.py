"""Every git command swarmforge runs: `git [options] -C <dir> args...`, through proc.

proc's policy applies to each: the variables that locate a repository (GIT_DIR and
the rest of `policy.LOCAL_GIT_VARS`) never reach git, so `-C <dir>` alone says which
repository is meant. An outcome is decided by git's exit code; what git said on
stderr only goes into messages.

`run`     the outcome, whatever the exit code;
`git`     the stdout, GitFailed on a non-zero exit;
`within`  the outcome, or None when git did not finish in time (a remote that hangs).
"""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError
from swarmforge.proc import spawn

TYPE_CHECKING = False  # not typing's: importing typing costs the helpers milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping

# Used only when git configuration names nobody, so that commits made on the
# user's behalf never fail for want of an identity and never override theirs.
FALLBACK_IDENTITY = ("-c", "user.name=swarmforge", "-c", "user.email=swarmforge@localhost")


class GitFailed(SwarmforgeError):
    """A git command exited non-zero."""


def _argv(cwd: str, *args: str, options: tuple[str, ...] = ()) -> list[str]:
    """The command line of `git [options] -C cwd args...`."""
    return ["git", *options, "-C", cwd, *args]


def run(
    cwd: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    input: bytes = b"",
    options: tuple[str, ...] = (),
    limit: int | None = None,
) -> spawn.Completed:
    """Run `git [options] -C cwd args...` and return the outcome, whatever its exit code.

    With `limit`, at most that many bytes of its output are read: a git with more to
    say is ended there (`Completed.cut`). Raises SwarmforgeError only when git cannot be
    started (not on PATH).
    """
    return spawn.run(_argv(cwd, *args, options=options), input=input, env=env, limit=limit)


def git(
    cwd: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    input: bytes = b"",
    options: tuple[str, ...] = (),
) -> str:
    """Run `git [options] -C cwd args...` and return its stdout; GitFailed if it exits non-zero."""
    result = run(cwd, *args, env=env, input=input, options=options)
    if not result.ok:
        lines = result.stderr.decode(errors="replace").strip().splitlines()
        said = f": {lines[-1]}" if lines else ""
        raise GitFailed(
            f"'git {' '.join(args[:2])}' failed in {cwd} (exit {result.returncode}){said}.",
            details=tuple(lines[:-1]),
        )
    return result.stdout.decode(errors="surrogateescape")


def within(
    cwd: str,
    *args: str,
    timeout: float,
    extra: Mapping[str, str] | None = None,
    options: tuple[str, ...] = (),
) -> spawn.Completed | None:
    """Run `git [options] -C cwd args...` for at most `timeout` seconds; None when it took
    longer.

    It runs in a session of its own, without a terminal: ssh and git then fail at
    once where they would ask for a password. On timeout it is killed with whatever
    it started (ssh). OSError when it cannot be started.
    """
    import os
    import signal
    import subprocess

    from swarmforge.proc import popen  # not on the helpers' path, which never waits on a hub

    command = _argv(cwd, *args, options=options)
    child = popen.start(
        command,
        extra=extra,
        stdin=popen.DEVNULL,
        stdout=popen.PIPE,
        stderr=popen.PIPE,
        session=True,
    )
    with child:
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return None
    return spawn.Completed(command, child.returncode, out, err)
