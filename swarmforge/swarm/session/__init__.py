"""A session, from `up` to `down`: start every role of swarmforge.conf, and stop all of it."""
