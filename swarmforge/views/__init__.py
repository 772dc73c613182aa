"""Read-only views of a swarm: the terminal view, the browser cockpit, attaching a terminal."""
