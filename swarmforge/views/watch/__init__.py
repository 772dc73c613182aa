"""`swarmforge watch`: a live terminal view of the swarm, read-only, built on Textual.

The data comes from snapshot.py and its neighbours, read when feed.py says it may
have changed; this package only lays it out and maps keys. Reading the roles' status
costs git calls per role, and with `[transport]` sometimes a question to the NATS
server, so it runs in a worker thread, never two at once, and the UI thread only
paints what it returns; between reads it only ages what it shows, every 2 s. With
`[transport]` the table gets a host column and a row per role of another host, and a
line under the summary names every host.
"""
