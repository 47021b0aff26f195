#!/usr/bin/env bash
# Installs a coding agent's CLI that a real-client acceptance test
# (cmd/tether/agent_realclient*_test.go) drives, pinned, into bin/AGENT-...
# (gitignored), idempotently: a second run with the same version does nothing.
#
#   hack/agents/install.sh                    Claude Code, the pinned version below
#   hack/agents/install.sh latest             Claude Code, the newest published version
#   hack/agents/install.sh AGENT [VERSION|latest]
#                                             AGENT is claude, codex or gemini
#
# It prints the path of the agent's executable. Node and npm come from the
# distribution's packages when absent. Claude Code and Codex are native
# executables inside their packages (an optional dependency for Codex), so
# the Node version matters only to npm itself; Gemini CLI runs on Node.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

agent=claude
case ${1:-} in
claude | codex | gemini) agent=$1; shift ;;
esac

case $agent in
claude)
  # Upgrading the pinned client is this one line: the newest 2.1.x whose
  # engines accept the Node of Debian's packages (>=18; from 2.1.198 on the
  # package asks for Node 22).
  CLAUDE_CODE_VERSION=2.1.197
  pinned=$CLAUDE_CODE_VERSION
  pkg=@anthropic-ai/claude-code
  dir=claude-code
  prefix_env=${CLAUDE_CODE_PREFIX:-}
  bin=claude
  # The native executable the package's wrapper runs.
  native=""
  ;;
codex)
  # Upgrading the pinned client is this one line. 0.171.0 has the hooks
  # tether installs (stable "hooks" feature, on by default) and accepts
  # a custom model provider's key from the environment.
  CODEX_VERSION=0.171.0
  pinned=$CODEX_VERSION
  pkg=@openai/codex
  dir=codex
  prefix_env=${CODEX_PREFIX:-}
  bin=codex
  # npm skips a failed optional dependency silently: check it is there.
  native=$pkg-linux-x64
  [[ $(uname -m) == aarch64 || $(uname -m) == arm64 ]] && native=$pkg-linux-arm64
  ;;
gemini)
  # Upgrading the pinned client is this one line. 0.61.0 has the hooks
  # tether installs (on by default) and reads GOOGLE_GEMINI_BASE_URL; its
  # engines ask for Node >=20.
  GEMINI_CLI_VERSION=0.61.0
  pinned=$GEMINI_CLI_VERSION
  pkg=@google/gemini-cli
  dir=gemini-cli
  prefix_env=${GEMINI_CLI_PREFIX:-}
  bin=gemini
  native=""
  ;;
esac

version=${1:-$pinned}
prefix=${prefix_env:-bin/$dir}
[[ $version == latest ]] && prefix=${prefix_env:-bin/$dir-latest}
exe=$prefix/node_modules/.bin/$bin

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >&2
fi

installed() {
  [[ -x $exe ]] && [[ -f $prefix/node_modules/$pkg/package.json ]] &&
    { [[ -z $native ]] || [[ -f $prefix/node_modules/$native/package.json ]]; } &&
    node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
      "$PWD/$prefix/node_modules/$pkg/package.json" "$1"
}

if [[ $version == latest ]]; then
  version=$(npm view "$pkg" version)
fi
if ! installed "$version"; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --include=optional --loglevel=error "$pkg@$version" >&2
  installed "$version" || { echo "hack/agents/install.sh: $pkg@$version did not install into $prefix" >&2; exit 1; }
fi
echo "$PWD/$exe"
