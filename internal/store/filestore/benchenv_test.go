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

package filestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// benchNamespace is the namespace the comparison benchmarks write to, on
// both backends, so that both store objects of the same path and size.
const benchNamespace = "bench"

// startKubeAPIServer starts a real kube-apiserver and etcd with the
// project's CRDs and returns a client for it, with benchNamespace created.
//
// The environment lives only as long as the calling benchmark: it is
// stopped by b.Cleanup, which runs after the benchmark's sub-benchmarks.
// This package's TestMain (process_test.go) re-executes the test binary as
// store helper processes, so a process-wide environment stopped from
// TestMain would mean changing it; scoping the environment to one
// benchmark leaves no kube-apiserver behind and costs one start per run.
//
// etcd runs with fsync on. envtest starts it with --unsafe-no-fsync for
// speed, but the file store fsyncs every write and a cluster's etcd does
// too, so the reference must pay for durability as well or the ratio
// compares a durable write with a buffered one.
//
// It skips the benchmark when KUBEBUILDER_ASSETS is not set; `make bench`
// sets it to bin/k8s.
func startKubeAPIServer(b *testing.B) client.Client {
	b.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Skip("KUBEBUILDER_ASSETS is not set; `make bench` builds the assets and sets it")
	}
	etcd := &envtest.Etcd{}
	etcd.Configure().Set("unsafe-no-fsync", "false")
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		ControlPlane:          envtest.ControlPlane{Etcd: etcd},
	}
	cfg, err := env.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := env.Stop(); err != nil {
			b.Error("stopping envtest:", err)
		}
	})
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := agentsv1alpha1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}
	if err := c.Create(context.Background(), ns); err != nil {
		b.Fatal(err)
	}
	return c
}
