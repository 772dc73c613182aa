"""The environment every child gets: ours or the one given, less the variables that locate a
git repository, plus the caller's own.

A child inherits our environment, or the one given, less the variables that locate a
git repository (`LOCAL_GIT_VARS`), plus the caller's own variables (`extra`: a run's
tags, a scratch index). A GIT_DIR that a hook or a shell set must never send a
child's git to another repository. Every way of starting a child in `swarmforge.proc`
applies it.
"""

from __future__ import annotations

import os

# Not typing.TYPE_CHECKING: importing typing would cost the helpers ~10 ms (mypy
# knows the name either way).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


# What `git rev-parse --local-env-vars` lists (git 2.39; tests compare it with the
# installed git's list).
LOCAL_GIT_VARS = frozenset(
    {
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_OBJECT_DIRECTORY",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_INDEX_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_COMMON_DIR",
    }
)


class Environment(dict[str, str]):
    """An environment the policy was applied to: children get it as it is."""


def environment(
    env: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
) -> Environment:
    """`env` (default: ours) less `LOCAL_GIT_VARS`, plus `extra`.

    An `Environment` is taken as it is: the policy made it, and what the caller
    added on purpose (a scratch GIT_INDEX_FILE) stays.
    """
    if isinstance(env, Environment):
        made = Environment(env)
    else:
        base = os.environ if env is None else env
        made = Environment((k, v) for k, v in base.items() if k not in LOCAL_GIT_VARS)
    if extra:
        made.update(extra)
    return made


def child_env(extra: Mapping[str, str] | None = None) -> Environment:
    """Our environment as a child gets it, plus `extra`."""
    return environment(None, extra)
