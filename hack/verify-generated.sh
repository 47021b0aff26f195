#!/usr/bin/env bash
# Fails when the generated files (deepcopy, CRDs, RBAC) differ from what
# `make generate manifests` produces from the current markers. It compares
# against a snapshot of the working tree, so it works with uncommitted edits.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

generated=(api/v1alpha1/zz_generated.deepcopy.go config/crd/bases config/crd/zz_generated.crds.pb config/rbac/role.yaml)
snapshot="$(mktemp -d)"
trap 'rm -rf "${snapshot}"' EXIT
for path in "${generated[@]}"; do
	mkdir -p "${snapshot}/$(dirname "${path}")"
	cp -r "${path}" "${snapshot}/${path}"
done

make --no-print-directory generate manifests >/dev/null

stale=0
for path in "${generated[@]}"; do
	if ! diff -r "${snapshot}/${path}" "${path}" >&2; then
		stale=1
	fi
done
if ((stale)); then
	echo "generated files were stale and have been regenerated: review and commit them" >&2
	exit 1
fi
echo "generated files are up to date" >&2
