/*
Copyright 2026 The tether authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package testenv starts a real kube-apiserver and etcd with tether's CRDs
// installed, for tests that compare the file store or the CLI with a cluster.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/tether-dev/tether/internal/scheme"
)

func init() {
	// envtest logs through controller-runtime's global logger, which
	// otherwise prints a stack trace complaining that it was never set.
	ctrllog.SetLogger(logr.Discard())
}

// AssetsEnv names the directory holding the kube-apiserver and etcd binaries.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// Env is a running API server with tether's CRDs.
type Env struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config
	// Client is a controller-runtime client with tether's scheme.
	Client client.WithWatch
	// Kubeconfig is the path of a kubeconfig file for the same administrator,
	// for driving binaries such as kubectl and tether --cluster.
	Kubeconfig string
	// AuditLog is the path of the API server's audit log (JSON lines, one
	// audit.k8s.io/v1 Event each), when Options.AuditPolicy asked for one.
	AuditLog string

	admin []byte
}

// CRDDir is the absolute path of config/crd/bases.
func CRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "crd", "bases")
}

// Options configure StartWith.
type Options struct {
	// AuditPolicy, when set, is an audit.k8s.io/v1 Policy (YAML) the API
	// server applies, logging each event as one JSON line to Env.AuditLog.
	AuditPolicy string
	// AdmissionPlugins are enabled besides the API server's defaults, for
	// example OwnerReferencesPermissionEnforcement.
	AdmissionPlugins []string
}

// Kubectl is the kubectl for tests that drive it: the one hack/envtest
// builds beside the API server, of the same release, else the one in PATH.
// With neither it fails t rather than skip it, so that a machine without
// kubectl cannot pass the acceptance tests unseen; like Start, it skips t
// when KUBEBUILDER_ASSETS is unset.
func Kubectl(t testing.TB) string {
	t.Helper()
	assets := os.Getenv(AssetsEnv)
	if assets == "" {
		t.Skip(AssetsEnv + " is not set; `make test` builds the assets and sets it")
	}
	built := filepath.Join(assets, "kubectl")
	if fi, err := os.Stat(built); err == nil && fi.Mode()&0o111 != 0 {
		return built
	}
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("no kubectl in %s or PATH: `make envtest` builds one into bin/k8s", AssetsEnv)
	}
	return path
}

// Start starts an API server for t and stops it when t ends. It skips t
// when KUBEBUILDER_ASSETS is unset; `make test` builds the assets and sets it.
func Start(t testing.TB) *Env {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, opts Options) *Env {
	t.Helper()
	if os.Getenv(AssetsEnv) == "" {
		t.Skip(AssetsEnv + " is not set; `make test` builds the assets and sets it")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{CRDDir()},
		ErrorIfCRDPathMissing: true,
	}
	auditLog := ""
	if opts.AuditPolicy != "" {
		dir := t.TempDir()
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(opts.AuditPolicy), 0o600); err != nil {
			t.Fatal(err)
		}
		auditLog = filepath.Join(dir, "audit.log")
		// Blocking mode writes each event before the request returns.
		env.ControlPlane.GetAPIServer().Configure().
			Set("audit-policy-file", policy).
			Set("audit-log-path", auditLog).
			Set("audit-log-format", "json").
			Set("audit-log-mode", "blocking")
	}
	if len(opts.AdmissionPlugins) > 0 {
		env.ControlPlane.GetAPIServer().Configure().Set("enable-admission-plugins", strings.Join(opts.AdmissionPlugins, ","))
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	// Tests also read what the cluster makes of tether's work (Leases, Deployments).
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	user, err := env.AddUser(envtest.User{Name: "tether-test-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return &Env{Config: cfg, Client: c, Kubeconfig: path, AuditLog: auditLog, admin: kubeconfig}
}

// ImpersonatingKubeconfig writes a kubeconfig that authenticates as the
// administrator of Kubeconfig but acts as user (and groups, if any): every
// request is authorized as that user, as `kubectl --as` does. For a
// ServiceAccount, user is "system:serviceaccount:NAMESPACE:NAME" and the
// API server adds the ServiceAccount's groups itself.
func (e *Env) ImpersonatingKubeconfig(t testing.TB, user string, groups ...string) string {
	t.Helper()
	cfg, err := clientcmd.Load(e.admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
		auth.ImpersonateGroups = groups
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
