#!/bin/sh
# done_with_current_task.sh: complete the current task, then accept the next (see docs/protocol.md).
_sf_self=$(readlink -f -- "$0") && . "${_sf_self%/*}/_swarmforge.sh" && swarmforge_exec done --mode task "$@"
