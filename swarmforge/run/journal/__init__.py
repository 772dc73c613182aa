"""The journal of a planned run (`events.jsonl`), its checkpoints, and resuming from them."""
