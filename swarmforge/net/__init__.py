"""Mail across hosts: roles on several machines pass handoffs through NATS JetStream.

nats-py (the optional `nats` extra) is imported only by modules that speak to a server:
this package, the daemon's crossing, multi-host doctor checks and the remote workers of
planned runs (run/remote/). A project that runs on one machine never loads it.
"""
