"""`swarmforge cockpit`: the live view of the swarm in a browser, read-only.

One page (cockpit.html, no build step, no third-party code) shows what `watch` shows,
one row per role and the latest events, plus the project's planned runs: every
task with its state and what it depends on, and the parked tasks with their reasons.
The page opens one Server-Sent Events stream (`/stream`) and changes in place as
the server pushes: it never reloads and never polls. With `[transport]` the rows also
hold the roles of the swarm's other hosts (`"remote": true`, read from their heartbeats
no more than every few seconds) and the state lists every host: what only a role's own
host can show (output, diff, handoff, a terminal) answers with the host that runs it.

The server reads the swarm once for every page at once (`Hub`), and only while a page
is open: when feed.py says it may have changed, and not otherwise. The page ages what
it shows between two states by itself. Nothing here writes to the project: no
endpoint changes anything.

It listens on loopback unless told otherwise. Beyond loopback every request must
carry the token printed at start-up (`?token=` in the URL the page was opened with,
or `Authorization: Bearer`); on loopback, requests must name a loopback host, so a
web page elsewhere cannot reach the cockpit through a DNS name it controls.
"""
