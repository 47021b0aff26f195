#!/usr/bin/env bash
# Installs the Claude Code CLI that the real-client acceptance test
# (cmd/tether/agent_realclient_test.go) drives, pinned, into bin/claude-code
# (gitignored), idempotently: a second run with the same version does nothing.
#
#   hack/agents/install.sh            the pinned version below
#   hack/agents/install.sh latest     the newest published version (make test-agents-latest)
#
# It prints the path of the claude executable. Node and npm come from the
# distribution's packages when absent. The client is a native executable
# inside the package, so the Node version matters only to npm itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# Upgrading the pinned client is this one line: the newest 2.1.x whose
# engines accept the Node of Debian's packages (>=18; from 2.1.198 on the
# package asks for Node 22).
CLAUDE_CODE_VERSION=2.1.197

version=${1:-$CLAUDE_CODE_VERSION}
prefix=${CLAUDE_CODE_PREFIX:-bin/claude-code}
[[ $version == latest ]] && prefix=${CLAUDE_CODE_PREFIX:-bin/claude-code-latest}
pkg=@anthropic-ai/claude-code
claude=$prefix/node_modules/.bin/claude

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >&2
fi

installed() {
  [[ -x $claude ]] && [[ -f $prefix/node_modules/$pkg/package.json ]] &&
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
echo "$PWD/$claude"
