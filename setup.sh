#!/usr/bin/env bash
# Installs everything swarmforge and its tests need on a Debian machine:
# git, tmux, python3-venv, node, npm, chromium, bubblewrap and socat from apt (when missing), the package with its test
# extras in a virtual environment at .venv/, and the claude and codex CLIs at pinned
# versions in .venv/agents/ (linked into .venv/bin/), which the tests drive offline.
# One line per step; the tools' own output is kept quiet.
set -euo pipefail
cd "$(dirname "$0")"
step() { printf '[%3ds] %s\n' "$SECONDS" "$*"; }
missing=()
for tool in git tmux npm; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
# The agents' own sandboxes: bubblewrap (codex and claude) and socat (claude's).
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v socat >/dev/null 2>&1 || missing+=(socat)
# The browser the cockpit's tests drive through Playwright: Debian's, not a download.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# Debian's own python3 makes virtual environments only with python3-venv installed.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    step "apt packages: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
else
    step "apt packages: git, tmux, node, npm, chromium, bubblewrap, socat and python3-venv are already installed"
fi
step "virtual environment: .venv/"
python3 -m venv .venv
step "Python packages: swarmforge and its test tools (pip)"
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -e '.[test,nats]'
# The agent CLIs the tests run for real; bump these together with the tests' expectations.
CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
step "agent CLIs: claude $CLAUDE_VERSION and codex $CODEX_VERSION (npm, the longest step)"
npm install --silent --no-audit --no-fund --prefix .venv/agents \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION"
for agent in claude codex; do
    ln -sf "../agents/node_modules/.bin/$agent" ".venv/bin/$agent"
done
step "swarmforge installed in $(pwd)/.venv (claude $CLAUDE_VERSION, codex $CODEX_VERSION)"
