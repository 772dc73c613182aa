"""Healing a checkout's `.swarmforge` view of swarm state (statedir.py), on every use.

The helpers (through `Mailbox.ensure`), every `swarmforge` command and the daemon (twice
a second) call `ensure`. A view that was deleted is made again; anything else standing
in its place (a directory a merged commit brought, a file, a link aimed elsewhere) is
moved aside whole, to `set-aside/<checkout>-<time>` in the main checkout's state, never
read as state, and the view made again; an older version's state directory is moved
in (statedir.move_in). Each heal is a `state-view-healed` event. The view's first
making, by `up`, is no heal.
"""

from __future__ import annotations

import os

from swarmforge import events, fsutil, statedir, times
from swarmforge.layout import STATE_DIR


def ensure(top: str) -> str | None:
    """Check the view of the checkout at `top` and heal it; what was healed, or None.

    A checkout that is gone is never made again here; its state stays where it lies.
    A project with no state yet gets no view.
    """
    found = statedir.placed(top)
    if found is None or statedir.own_view(top) or not os.path.isdir(top):
        return None
    real, text = found
    view = os.path.join(os.path.abspath(top), STATE_DIR)
    if os.path.islink(real):
        return None  # not what swarmforge makes: never followed (Mailbox refuses it too)
    kept = ""
    if not os.path.isdir(real):
        # No state yet: nothing to show, but an older version's state to move in; a
        # `.swarmforge/` a commit brought is set aside once `up` has made the state.
        if not statedir.move_in(top):
            return None
        what = "moved into the git directory"
    else:
        if os.path.lexists(view):
            kept = _set_aside(view, real)
            if not kept:
                return None
            what = "replaced"
        else:
            # Only a view made before and gone since is healed: not the first making.
            what = "deleted" if os.path.lexists(os.path.join(real, statedir.VIEW_MADE)) else ""
        if not statedir.make_view(view, real, text) or not what:
            return None
    main_state = _main_state(real)
    log = events.EventLog(os.path.dirname(os.path.dirname(main_state)))
    log.emit("state-view-healed", {"checkout": top, "found": what, "set_aside": kept or None})
    return what


def _main_state(real: str) -> str:
    """The main checkout's state directory, of a checkout's state at `real`."""
    return real.split(os.sep + statedir.CHECKOUTS + os.sep)[0]


def _set_aside(view: str, real: str) -> str:
    """Move what stands at `view` under `set-aside/`; where, or "" if it could not be."""
    name = os.path.basename(os.path.dirname(view))
    target = os.path.join(
        _main_state(real), statedir.SET_ASIDE, f"{name}-{times.compact(micro=True)}"
    )
    try:
        fsutil.makedirs(os.path.dirname(target))
        os.rename(view, target)
    except OSError:
        return ""
    return target
