#!/bin/sh
# done_with_current.sh: complete the current task or batch, then accept the next (see docs/protocol.md).
_sf_self=$(readlink -f -- "$0") && . "${_sf_self%/*}/_swarmforge.sh" && swarmforge_exec done "$@"
