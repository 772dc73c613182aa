#!/bin/sh
# ready_for_next_task.sh: accept the next task (see docs/protocol.md).
_sf_self=$(readlink -f -- "$0") && . "${_sf_self%/*}/_swarmforge.sh" && swarmforge_exec ready --mode task "$@"
