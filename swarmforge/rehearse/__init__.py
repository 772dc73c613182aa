"""Rehearsals: the real agent CLIs driven offline by a scripted model server."""
