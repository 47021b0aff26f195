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
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
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
}

// CRDDir is the absolute path of config/crd/bases.
func CRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "crd", "bases")
}

// Start starts an API server for t and stops it when t ends. It skips t
// when KUBEBUILDER_ASSETS is unset; `make test` builds the assets and sets it.
func Start(t testing.TB) *Env {
	t.Helper()
	if os.Getenv(AssetsEnv) == "" {
		t.Skip(AssetsEnv + " is not set; `make test` builds the assets and sets it")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{CRDDir()},
		ErrorIfCRDPathMissing: true,
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
	return &Env{Config: cfg, Client: c, Kubeconfig: path}
}
