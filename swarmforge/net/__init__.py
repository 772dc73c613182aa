"""Mail across hosts: roles on several machines pass handoffs through NATS JetStream.

Only this package imports nats-py (the optional `nats` extra): a project that runs
on one machine, files only, never loads it.
"""
