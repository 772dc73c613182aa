"""swarmforge: a swarm of coding agents on one git repository."""

# Kept import-free: the agent-facing helpers import this package on every call.
__version__ = "0.1.0"
