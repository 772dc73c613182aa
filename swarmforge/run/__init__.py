"""Planned runs: a dependency-gated, journaled DAG of tasks."""
