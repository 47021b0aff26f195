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

package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// populate creates n Hooks like testdata/hooks/running.yaml, status
// included, through c, on every CPU.
func populate(b *testing.B, c client.Client, n int) {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "running.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	proto := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &proto); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			u := &unstructured.Unstructured{Object: runtimeDeepCopy(proto)}
			u.SetName(fmt.Sprintf("hook-%05d", i))
			unstructured.RemoveNestedField(u.Object, "metadata", "generation")
			status := u.Object["status"]
			delete(u.Object, "status")
			if err := c.Create(ctx, u); err != nil {
				errs <- err
				return
			}
			u.Object["status"] = status
			errs <- c.Status().Update(ctx, u)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

func runtimeDeepCopy(m map[string]interface{}) map[string]interface{} {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// measure runs a command to completion through hack/peakrss (see there
// why) and returns its wall time and peak RSS, in bytes.
func measure(b *testing.B, peakrss, name string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(peakrss, append([]string{name}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, stderr.Bytes())
	}
	if len(out) == 0 {
		b.Fatalf("%s %v printed nothing", name, args)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	var rssKiB, wallNS, starterKiB int64
	if _, err := fmt.Sscanf(lines[len(lines)-1], "peakrss: %d KiB, %d ns, starter %d KiB", &rssKiB, &wallNS, &starterKiB); err != nil {
		b.Fatalf("%s %v: reading hack/peakrss's report %q: %v", name, args, lines[len(lines)-1], err)
	}
	return time.Duration(wallNS), rssKiB << 10
}

// BenchmarkGetHooks times the whole `tether get hooks` process on the
// local store holding n Hooks against `kubectl get hooks` on kube-apiserver
// holding the same n Hooks, in the same run. It reports the wall time and
// peak RSS of both and their ratios (tether/kubectl; below 1 is faster or
// smaller). With $TETHER_BENCH_BASELINE naming another tether binary (an
// earlier build), it times that one too, alternated in the same run.
func BenchmarkGetHooks(b *testing.B) {
	env := testenv.Start(b)
	for _, n := range []int{1000, 10000} {
		getHooks(b, env, n)
	}
}

// BenchmarkGetHooks100k is BenchmarkGetHooks at 100,000 Hooks. Its setup
// takes several minutes, so `make bench` (-bench .) skips it; run it with
// -bench 100k.
func BenchmarkGetHooks100k(b *testing.B) {
	testsupport.Skip100k(b)
	getHooks(b, testenv.Start(b), 100000)
}

func getHooks(b *testing.B, env *testenv.Env, n int) {
	// Populated once: the sub-benchmark body runs again for each b.N.
	// Without fsyncs: the setup's durability is not what is measured.
	dir := filepath.Join(b.TempDir(), "store")
	store := testsupport.Store(b, dir, testsupport.WithoutFsync)
	populate(b, store.Client(), n)
	_ = store.Close()
	ns := fmt.Sprintf("bench-%d", n)
	if out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "create", "namespace", ns).CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	populateNS(b, env.Client, ns, n)
	peakrss := testsupport.BuildTool(b, "peakrss")
	b.Run(fmt.Sprintf("hooks=%d", n), func(b *testing.B) {
		// One untimed run of each warms the page cache and the API server's watch cache.
		measure(b, peakrss, tetherBin, "--store", dir, "get", "hooks")
		measure(b, peakrss, "kubectl", "--kubeconfig", env.Kubeconfig, "-n", ns, "get", "hooks")
		baseline := os.Getenv("TETHER_BENCH_BASELINE")
		if baseline != "" {
			measure(b, peakrss, baseline, "--store", dir, "get", "hooks")
		}
		var tWall, kWall, bWall time.Duration
		var tRSS, kRSS, bRSS int64
		b.ResetTimer()
		for range b.N {
			w, r := measure(b, peakrss, tetherBin, "--store", dir, "get", "hooks")
			tWall, tRSS = tWall+w, max(tRSS, r)
			if baseline != "" {
				w, r = measure(b, peakrss, baseline, "--store", dir, "get", "hooks")
				bWall, bRSS = bWall+w, max(bRSS, r)
			}
			w, r = measure(b, peakrss, "kubectl", "--kubeconfig", env.Kubeconfig, "-n", ns, "get", "hooks")
			kWall, kRSS = kWall+w, max(kRSS, r)
		}
		b.StopTimer()
		b.ReportMetric(float64(tWall.Milliseconds())/float64(b.N), "tether-ms/op")
		b.ReportMetric(float64(kWall.Milliseconds())/float64(b.N), "kubectl-ms/op")
		b.ReportMetric(float64(tWall)/float64(kWall), "wall-ratio")
		b.ReportMetric(float64(tRSS)/(1<<20), "tether-peak-MiB")
		b.ReportMetric(float64(kRSS)/(1<<20), "kubectl-peak-MiB")
		b.ReportMetric(float64(tRSS)/float64(kRSS), "rss-ratio")
		if baseline != "" {
			b.ReportMetric(float64(bWall.Milliseconds())/float64(b.N), "baseline-ms/op")
			b.ReportMetric(float64(bWall)/float64(kWall), "baseline-wall-ratio")
			b.ReportMetric(float64(bRSS)/(1<<20), "baseline-peak-MiB")
			b.ReportMetric(float64(bRSS)/float64(kRSS), "baseline-rss-ratio")
		}
	})
}

// populateNS is populate in namespace ns.
func populateNS(b *testing.B, c client.Client, ns string, n int) {
	b.Helper()
	populate(b, namespaced{Client: c, ns: ns}, n)
}

// namespaced puts every created object in ns.
type namespaced struct {
	client.Client
	ns string
}

func (c namespaced) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	obj.SetNamespace(c.ns)
	return c.Client.Create(ctx, obj, opts...)
}
