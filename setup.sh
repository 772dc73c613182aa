#!/usr/bin/env bash
# Installs everything swarmforge and its tests need on a Debian machine:
# git, tmux and python3-venv from apt (when missing), then the package with its test extras
# in a virtual environment at .venv/.
set -euo pipefail
cd "$(dirname "$0")"
missing=()
for tool in git tmux; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
# Debian's own python3 makes virtual environments only with python3-venv installed.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
python3 -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -e '.[test]'
echo "swarmforge installed in $(pwd)/.venv"
