"""Command tasks of planned runs on workers on other hosts: the task stream, clones, the worker."""
