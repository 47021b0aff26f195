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

package controllers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// waveHooks is how many Hooks BenchmarkHookWave reconciles.
const waveHooks = 2000

// BenchmarkHookWave is the start-up wave of `tether run` in one process,
// for its CPU and allocation profiles (-cpuprofile, -memprofile): waveHooks
// Hooks like testdata/hooks/running.yaml, never reconciled, each with a
// passed step, so that each first reconcile verifies receipts with a key,
// writes its recovery file and stores the ReceiptsVerified condition. It
// reports the time from the Manager's start until every Hook's first
// reconcile was stored, per Hook.
func BenchmarkHookWave(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "hooks", "running.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	proto := &v1.Hook{}
	if err := yaml.Unmarshal(data, proto); err != nil {
		b.Fatal(err)
	}
	proto.Spec.StaleAfter = &metav1.Duration{Duration: 24 * time.Hour}
	proto.Spec.Steps[0].Validate = nil
	proto.Status.Steps[0].Receipts = nil
	ctx := context.Background()
	var total time.Duration
	b.StopTimer()
	for range b.N {
		env := newStore(b)
		var g errgroup.Group
		g.SetLimit(8)
		for i := range waveHooks {
			g.Go(func() error {
				h := proto.DeepCopy()
				h.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("hook-%05d", i)}
				now := metav1.NewMicroTime(time.Now())
				status := h.Status
				status.LastHeartbeat = &now
				if err := env.c.Create(ctx, h); err != nil {
					return err
				}
				h.Status = status
				return env.c.Status().Update(ctx, h)
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		km := &receipts.FileKeyManager{Dir: filepath.Join(b.TempDir(), "keys")}
		if _, err := km.Signer(ctx, &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "key", UID: "key"}}); err != nil {
			b.Fatal(err)
		}
		recoveryDir := filepath.Join(env.dir, "store", "recovery")
		opts := controllers.Options{Config: testConfig(b), RecoveryDir: recoveryDir, SkipNameValidation: true, Evidence: receipts.EvidenceFunc(ctx, km)}
		opts.Worker.LogDir = filepath.Join(env.dir, "logs")
		if err := controllers.SetupAll(env.mgr, opts); err != nil {
			b.Fatal(err)
		}
		list := &v1.HookList{}
		if err := env.c.List(ctx, list, client.InNamespace("default"), client.Limit(1)); err != nil {
			b.Fatal(err)
		}
		w, err := env.c.Watch(ctx, &v1.HookList{}, client.InNamespace("default"), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		testsupport.Start(b, env.mgr)
		reconciled := map[string]bool{}
		for ev := range w.ResultChan() {
			if h, ok := ev.Object.(*v1.Hook); ok && meta.FindStatusCondition(h.Status.Conditions, controllers.ConditionReceiptsVerified) != nil {
				reconciled[h.Name] = true
			}
			if len(reconciled) == waveHooks {
				break
			}
		}
		w.Stop()
		total += time.Since(start)
		b.StopTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N)/waveHooks, "ms/hook")
}
