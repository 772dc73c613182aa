"""The hub of a swarm on several hosts: `[transport] hub` is set and answers from this host."""

from __future__ import annotations

from swarmforge.config.transportsettings import TransportSettings
from swarmforge.doctor.check import Check
from swarmforge.git import command
from swarmforge.net.hub import PROTOCOLS, QUIET
from swarmforge.text import shown_url

HUB_TIMEOUT = 10.0  # seconds `git ls-remote` may take to answer


def check_hub(root: str, transport: TransportSettings, timeout: float = HUB_TIMEOUT) -> Check:
    """`[transport] hub` is set and answers `git ls-remote` from this host."""
    hub = transport.hub
    if hub is None:
        fix = "set [transport] hub to the git repository every host fetches from and pushes to"
        return Check("hub", "warn", "no [transport] hub: the hosts' branches meet nowhere", fix)
    answer = _ls_remote(root, hub, timeout)
    shown = shown_url(hub)
    if answer is None:
        fix = "check the URL, the network, and that this host may fetch without a prompt"
        return Check("hub", "FAIL", f"{shown} did not answer within {timeout:g} s", fix)
    if answer:
        fix = "check the URL, and that this host can fetch from it (ssh key, access rights)"
        return Check("hub", "FAIL", f"{shown} cannot be reached: {answer}", fix)
    return Check("hub", "ok", f"{shown} answers (git ls-remote)")


def _ls_remote(root: str, hub: str, timeout: float) -> str | None:
    """ "" when `git ls-remote` reaches `hub`, the last line it said when it could not,
    None when it did not answer in time.

    It runs in a session of its own, without a terminal: ssh and git then fail at once
    where they would ask for a password, instead of waiting for one. A relative hub is
    relative to the project, as git sees it from there. It follows `--` and runs with
    PROTOCOLS, as every git command that reaches the hub.
    """
    try:
        result = command.within(
            root, "ls-remote", "--", hub, "HEAD", timeout=timeout, extra=QUIET, options=PROTOCOLS
        )
    except OSError as exc:
        return f"cannot run git: {exc.strerror}"
    if result is None:
        return None
    if result.ok:
        return ""
    said = [line for line in result.stderr.decode(errors="replace").splitlines() if line.strip()]
    return said[-1].strip() if said else f"git ls-remote exited {result.returncode}"
