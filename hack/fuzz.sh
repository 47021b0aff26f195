#!/usr/bin/env bash
# Runs every fuzz target in the module for FUZZ_ITERATIONS inputs each.
# Targets named in SLOW_FUZZ_TARGETS (space-separated) get SLOW_FUZZ_ITERATIONS:
# their inputs are whole store directories and cost milliseconds each.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${FUZZ_ITERATIONS:-2000}
slow_iterations=${SLOW_FUZZ_ITERATIONS:-300}
slow_targets=" ${SLOW_FUZZ_TARGETS:-FuzzStoreFile} "
found=0
while IFS=: read -r file _ line; do
  target=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
  pkg=./$(dirname "$file")
  n=$iterations
  [[ $slow_targets == *" $target "* ]] && n=$slow_iterations
  echo "fuzz $pkg $target ${n}x"
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "${n}x" "$pkg"
  found=$((found + 1))
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' --exclude-dir=hack --exclude-dir=bin . | sed 's|^\./||' | sort)
if [[ $found -eq 0 ]]; then
  echo "no fuzz targets found" >&2
  exit 1
fi
