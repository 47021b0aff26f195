#!/usr/bin/env bash
# Builds kube-apiserver and etcd for controller-runtime envtest, and the
# kubectl the acceptance tests drive, from the Go modules pinned in
# hack/envtest/go.mod, into bin/k8s/ at the repository root.
#
# Binaries are rebuilt only when one is missing or when bin/k8s/.stamp does not
# match the sha256 of hack/envtest/go.mod + go.sum, so a warm run is a no-op.
#
# Progress goes to stderr; the only thing written to stdout is the absolute
# path of the assets directory, e.g. in a Makefile:
#
#   KUBEBUILDER_ASSETS ?= $(shell hack/envtest/build.sh)
#
# Environment:
#   ENVTEST_BUILD_PARALLELISM  value for `go build -p` (default 2; compiling
#                              kube-apiserver packages needs ~2.25 GB each)
set -euo pipefail

# Keep stdout clean: everything goes to stderr except the final path (fd 3).
exec 3>&1 1>&2

log() { printf 'envtest: %s\n' "$*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
root="$(cd "${here}/../.." && pwd -P)"
assets="${root}/bin/k8s"
stamp="${assets}/.stamp"

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum | cut -d' ' -f1
	else
		shasum -a 256 | cut -d' ' -f1
	fi
}

mkdir -p "${assets}"

# Serialise concurrent invocations (e.g. make -j) where flock is available.
if command -v flock >/dev/null 2>&1; then
	exec 9>"${assets}/.lock"
	flock 9
fi

want="$(cat "${here}/go.mod" "${here}/go.sum" | sha256)"
have="$(cat "${stamp}" 2>/dev/null || true)"

targets=()
if [[ "${have}" != "${want}" ]]; then
	if [[ -n "${have}" ]]; then
		log "hack/envtest/go.mod or go.sum changed; rebuilding"
	fi
	rm -f "${stamp}"
	targets=(kube-apiserver etcd kubectl)
else
	for bin in kube-apiserver etcd kubectl; do
		[[ -x "${assets}/${bin}" ]] || targets+=("${bin}")
	done
fi

if ((${#targets[@]} > 0)); then
	tmpfiles=()
	cleanup() { ((${#tmpfiles[@]} == 0)) || rm -f "${tmpfiles[@]}"; }
	trap cleanup EXIT

	# Build with the module's own go.mod only: no workspace, no vendor
	# directory, static binaries like the upstream release builds.
	export GOWORK=off CGO_ENABLED=0
	gobuild=(go build -C "${here}" -mod=readonly -trimpath -p "${ENVTEST_BUILD_PARALLELISM:-2}")

	for bin in "${targets[@]}"; do
		tmp="${assets}/.${bin}.tmp.$$"
		tmpfiles+=("${tmp}")
		start=${SECONDS}
		case "${bin}" in
		kube-apiserver | kubectl)
			# Without these -X flags the binary reports v0.0.0-master.
			version="$(go -C "${here}" list -mod=readonly -m -f '{{.Version}}' k8s.io/kubernetes)"
			major="${version#v}" && major="${major%%.*}"
			minor="${version#v*.}" && minor="${minor%%.*}"
			log "building ${bin} ${version} (takes several minutes on a cold cache)"
			"${gobuild[@]}" -o "${tmp}" -ldflags "-s -w \
				-X k8s.io/component-base/version.gitVersion=${version} \
				-X k8s.io/component-base/version.gitMajor=${major} \
				-X k8s.io/component-base/version.gitMinor=${minor}" \
				"k8s.io/kubernetes/cmd/${bin}"
			;;
		etcd)
			version="$(go -C "${here}" list -mod=readonly -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
			log "building etcd ${version}"
			"${gobuild[@]}" -o "${tmp}" -ldflags "-s -w" go.etcd.io/etcd/server/v3
			;;
		esac
		mv -f "${tmp}" "${assets}/${bin}"
		log "built ${assets}/${bin} in $((SECONDS - start))s"
	done

	tmp="${stamp}.tmp.$$"
	tmpfiles+=("${tmp}")
	printf '%s\n' "${want}" >"${tmp}"
	mv -f "${tmp}" "${stamp}"
else
	log "kube-apiserver, etcd and kubectl in ${assets} are up to date"
fi

printf '%s\n' "${assets}" >&3
