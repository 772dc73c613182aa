"""Parking: which tasks wait for a human, the ledgers of parked and decided tasks, and what
the decisions mean for a level."""
