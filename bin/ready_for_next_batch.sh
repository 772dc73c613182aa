#!/bin/sh
# ready_for_next_batch.sh: accept the next batch (see docs/protocol.md).
_sf_self=$(readlink -f -- "$0") && . "${_sf_self%/*}/_swarmforge.sh" && swarmforge_exec ready --mode batch "$@"
