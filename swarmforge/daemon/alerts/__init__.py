"""Notifications: a command of the user's, run on the events they chose, with the event on stdin.

The delivery daemon follows the project's event log (swarmforge/events.py) and hands
every new event to `Alerts.feed`. An event that matches a chosen trigger starts the
user's command with the event as JSON on its stdin, in the background: a command
that hangs, fails or floods never blocks or fails a delivery. Events of one trigger
that arrive while a notification for it is still pending (within `BURST` seconds)
are coalesced: the command runs once for the burst, with `count` and every event.

Triggers, as `[notify] on = [...]` names them:

    waiting, stalled, exited      an agent-state event with that state (exited also:
                                  agent-exited)
    handoff-failed, run-finished  the event of that kind
    budget-crossed                the event of that kind: a role, or the whole swarm, has
                                  spent its token budget for the run (daemon/budget/)
    any other name                the event of that kind, as docs/events.md lists them

Left out, `on` chooses every trigger named above.

Two ready-made commands read that JSON: `swarmforge notify-send` shows it on the
desktop (through `notify-send`), and `swarmforge bell` rings the terminal of
everyone attached to the swarm's tmux sessions.
"""
