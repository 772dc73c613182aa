"""Running the git CLI: one helper that turns a non-zero exit into a SwarmforgeError."""

from __future__ import annotations

from swarmforge import proc
from swarmforge.errors import SwarmforgeError

# Used only when git configuration names nobody, so that commits made on the
# user's behalf never fail for want of an identity and never override theirs.
FALLBACK_IDENTITY = ("-c", "user.name=swarmforge", "-c", "user.email=swarmforge@localhost")


class GitFailed(SwarmforgeError):
    """A git command exited non-zero."""


def run(cwd: str, *args: str, env: dict[str, str] | None = None) -> proc.Completed:
    """Run `git -C cwd args...` and return the outcome, whatever its exit code."""
    return proc.run(["git", "-C", cwd, *args], env=env)


def git(
    cwd: str, *args: str, env: dict[str, str] | None = None, options: tuple[str, ...] = ()
) -> str:
    """Run `git [options] -C cwd args...` and return its stdout; GitFailed if it exits non-zero."""
    result = proc.run(["git", *options, "-C", cwd, *args], env=env)
    if not result.ok:
        lines = result.stderr.decode(errors="replace").strip().splitlines()
        said = f": {lines[-1]}" if lines else ""
        raise GitFailed(
            f"'git {' '.join(args[:2])}' failed in {cwd} (exit {result.returncode}){said}.",
            details=tuple(lines[:-1]),
        )
    return result.stdout.decode(errors="surrogateescape")
