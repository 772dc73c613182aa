#!/bin/sh
# swarm_handoff.sh: validate a handoff draft and queue it (see docs/protocol.md).
_sf_self=$(readlink -f -- "$0") && . "${_sf_self%/*}/_swarmforge.sh" && swarmforge_exec handoff "$@"
