#!/bin/sh
# ready_for_next.sh: accept the next task or batch (mode from roles.tsv) (see docs/protocol.md).
_sf_self=$(readlink -f -- "$0") && . "${_sf_self%/*}/_swarmforge.sh" && swarmforge_exec ready "$@"
