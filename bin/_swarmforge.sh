# Sourced by the helpers in this directory; holds no logic beyond finding Python.
# Finds the interpreter that has swarmforge installed and execs the helper:
#   1. $SWARMFORGE_PYTHON, if set;
#   2. the virtual environment of this checkout (.venv, as the README installs it);
#   3. the interpreter named in the shebang of `swarmforge` on PATH;
#   4. python3 on PATH.
# The interpreter runs isolated (-I): the caller's directory and PYTHON* variables
# must never change which code handles a handoff.
swarmforge_exec() {
    _sf_py=${SWARMFORGE_PYTHON:-}
    if [ -z "$_sf_py" ] && [ -x "${_sf_self%/bin/*}/.venv/bin/python" ]; then
        _sf_py=${_sf_self%/bin/*}/.venv/bin/python
    fi
    if [ -z "$_sf_py" ] && _sf_cli=$(command -v swarmforge) && IFS= read -r _sf_line <"$_sf_cli"; then
        case $_sf_line in '#!'/*python*) _sf_py=${_sf_line#\#!} ;; esac
    fi
    exec "${_sf_py:-python3}" -I -c 'import sys; from swarmforge.cli import main; sys.exit(main())' "$@"
}
