#!/usr/bin/env bash
# Installs a coding-agent CLI that the real-client acceptance tests
# (cmd/tether/agent_realclient*_test.go) drive, pinned, into bin/AGENT-DIR
# (gitignored), idempotently: a second run with the same version does nothing.
#
#   hack/agents/install.sh [AGENT] [VERSION|latest]
#
#   hack/agents/install.sh                 Claude Code, the pinned version below
#   hack/agents/install.sh latest          Claude Code, the newest published version (make test-agents-latest)
#   hack/agents/install.sh gemini          Gemini CLI, the pinned version below
#   hack/agents/install.sh gemini latest   Gemini CLI, the newest published version
#
# AGENT is claude (the default) or gemini. It prints the path of the agent's
# executable. Node and npm come from the distribution's packages when absent.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

agent=claude
case ${1:-} in
  claude | gemini) agent=$1; shift ;;
esac

case $agent in
  claude)
    # Upgrading the pinned client is this one line: the newest 2.1.x whose
    # engines accept the Node of Debian's packages (>=18; from 2.1.198 on the
    # package asks for Node 22). The client is a native executable inside the
    # package, so the Node version matters only to npm itself.
    CLAUDE_CODE_VERSION=2.1.197
    pinned=$CLAUDE_CODE_VERSION
    pkg=@anthropic-ai/claude-code
    bin=claude
    prefix=${CLAUDE_CODE_PREFIX:-bin/claude-code}
    latest_prefix=${CLAUDE_CODE_PREFIX:-bin/claude-code-latest}
    ;;
  gemini)
    # Upgrading the pinned client is this one line (its engines ask for
    # Node >=20; the CLI runs on Node).
    GEMINI_CLI_VERSION=0.61.0
    pinned=$GEMINI_CLI_VERSION
    pkg=@google/gemini-cli
    bin=gemini
    prefix=${GEMINI_CLI_PREFIX:-bin/gemini-cli}
    latest_prefix=${GEMINI_CLI_PREFIX:-bin/gemini-cli-latest}
    ;;
esac

version=${1:-$pinned}
[[ $version == latest ]] && prefix=$latest_prefix
exe=$prefix/node_modules/.bin/$bin

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >&2
fi

installed() {
  [[ -x $exe ]] && [[ -f $prefix/node_modules/$pkg/package.json ]] &&
    node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
      "$PWD/$prefix/node_modules/$pkg/package.json" "$1"
}

if [[ $version == latest ]]; then
  version=$(npm view "$pkg" version)
fi
if ! installed "$version"; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error "$pkg@$version" >&2
  installed "$version" || { echo "hack/agents/install.sh: $pkg@$version did not install into $prefix" >&2; exit 1; }
fi
echo "$PWD/$exe"
