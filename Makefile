# tether — build, generate and test.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/tether-dev/tether/internal/version.Version=$(VERSION) \
           -X github.com/tether-dev/tether/internal/version.Commit=$(COMMIT)

CONTROLLER_GEN := go tool -modfile=hack/tools/go.mod controller-gen
GOLANGCI_LINT := go tool -modfile=hack/lint/go.mod golangci-lint

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: generate
generate: ## Generate deepcopy code from the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: ## Generate CRDs and RBAC from kubebuilder markers.
	$(CONTROLLER_GEN) crd rbac:roleName=manager-role paths=./api/... paths=./controllers/... output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	cd config/crd && go generate .

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: ## Run golangci-lint (pinned in hack/lint).
	$(GOLANGCI_LINT) run ./...

.PHONY: verify-generated
verify-generated: ## Fail when generated files are out of date.
	hack/verify-generated.sh

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd for envtest, and kubectl for the acceptance tests, into bin/k8s (once).
	hack/envtest/build.sh >/dev/null

# The shipped build: no cgo (a static binary, and no link of Go's plugin
# package, which would keep every exported method alive), no local paths,
# no symbol table or DWARF. cmd/tether/main_test.go builds the same way and
# cmd/tether/binary_test.go fails when the result drifts (see docs/design.md,
# "Build").
GO_BUILD := CGO_ENABLED=0 go build -trimpath

.PHONY: build
build: ## Build bin/tether: static, trimmed, stripped.
	$(GO_BUILD) -ldflags "$(LDFLAGS) -s -w" -o bin/tether ./cmd/tether

FUZZ_ITERATIONS ?= 2000
# Each store-file input costs several fsynced writes, so it gets fewer.
STORE_FUZZ_ITERATIONS ?= 300

.PHONY: test
test: verify-generated vet envtest browser ## Run every test: unit, envtest, end to end (race detector on), and a brief fuzz.
	KUBEBUILDER_ASSETS=$(CURDIR)/bin/k8s go test -race -count=1 -timeout 40m ./...
	$(MAKE) --no-print-directory fuzz FUZZ_ITERATIONS=$(FUZZ_ITERATIONS) STORE_FUZZ_ITERATIONS=$(STORE_FUZZ_ITERATIONS)

.PHONY: browser
browser: ## Install the headless Chromium the console's browser tests drive (Debian's chromium, with apt-get, when missing).
	hack/browser/install.sh >/dev/null

.PHONY: test-agents-latest
test-agents-latest: ## Rerun the real-client acceptance tests against the newest published clients (the pinned ones are in hack/agents/install.sh).
	TETHER_CLAUDE_CODE_VERSION=latest go test -count=1 -run '^TestRealClaudeCode' ./cmd/tether/
	TETHER_CODEX_VERSION=latest go test -count=1 -run '^TestRealCodex' ./cmd/tether/
	TETHER_GEMINI_CLI_VERSION=latest go test -count=1 -run '^TestRealGeminiCLI' ./cmd/tether/

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZ_ITERATIONS inputs each (STORE_FUZZ_ITERATIONS for store files).
	FUZZ_ITERATIONS=$(FUZZ_ITERATIONS) SLOW_FUZZ_ITERATIONS=$(STORE_FUZZ_ITERATIONS) SLOW_FUZZ_TARGETS=FuzzStoreFile hack/fuzz.sh

TORTURE_KILLS ?= 10000

.PHONY: torture
torture: ## Kill a store writer with SIGKILL TORTURE_KILLS times and check every acknowledged write survived.
	TETHER_CRASH_KILLS=$(TORTURE_KILLS) go test -count=1 -run '^TestCrashSafety$$' -v -timeout 240m ./internal/store/filestore

.PHONY: torture-disk
torture-disk: ## Full and read-only disk: fail every store write and fsync in turn (fault injection), and fill a real 1 MiB tmpfs (needs root to mount; skipped otherwise).
	go test -count=1 -run '^(TestFailedWriteNeverTakesEffect|TestFullAndReadOnlyDisk)$$' -v ./internal/store/filestore

BENCH_TIME ?= 1s

.PHONY: bench
bench: envtest ## Run the benchmarks, with references (raw fsync floor, kube-apiserver) measured in the same run.
	KUBEBUILDER_ASSETS=$(CURDIR)/bin/k8s go test -run '^$$' -bench . -benchtime $(BENCH_TIME) -timeout 60m ./...

# IMG names the operator's image: `make image` tags it so, and
# `make deploy` and `make build-installer` point the Deployment at it.
IMG ?= tether:latest
KUSTOMIZE := go tool -modfile=$(CURDIR)/hack/tools/go.mod kustomize
KUBECTL ?= kubectl

.PHONY: image
image: build ## Build the operator's OCI image from bin/tether without a container engine: bin/image/oci (OCI layout) and bin/image/tether.tar (docker load).
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) \
		go run ./hack/image -binary bin/tether -tag $(IMG) -version $(VERSION) -commit $(COMMIT) \
		-oci-layout bin/image/oci -tarball bin/image/tether.tar

.PHONY: install
install: manifests ## Install the CRDs into the cluster of the current kubeconfig context.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply -f -

.PHONY: uninstall
uninstall: manifests ## Remove the CRDs (and every Hook, Worker and Checkpoint) from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests ## Deploy the operator with image IMG to the cluster of the current kubeconfig context.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply -f -

.PHONY: undeploy
undeploy: ## Remove the operator (CRDs included) from the cluster.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: build-installer
build-installer: manifests ## Write dist/install.yaml: CRDs, RBAC and the operator with image IMG, for kubectl apply -f.
	mkdir -p dist
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default > dist/install.yaml

.PHONY: clean
clean: ## Remove build output.
	rm -rf bin
