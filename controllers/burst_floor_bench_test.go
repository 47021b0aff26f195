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
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// burstFloor is what a burst of stale transitions cannot beat on this
// machine, measured beside it: the same Hooks' status writes issued at once
// to a store of their own with no reconciler, each until a watch delivers
// it (store), and as many bare durable file replacements at once, each
// until it is done (fsync). Each holds one sample per Hook and round.
type burstFloor struct {
	env          *storeEnv
	hooks        []*v1.Hook
	store, fsync []time.Duration
	// cpu is, per round, the process's CPU time from the writes' start
	// until every one was seen.
	cpu []time.Duration
}

// newBurstFloor copies hooks, as the burst left them, into a store of its
// own.
func newBurstFloor(b *testing.B, from client.Client, names []string) *burstFloor {
	b.Helper()
	ctx := context.Background()
	f := &burstFloor{env: newStore(b)}
	for _, name := range names {
		h := &v1.Hook{}
		if err := from.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			b.Fatal(err)
		}
		status := h.Status
		h.ObjectMeta = metav1.ObjectMeta{Namespace: h.Namespace, Name: h.Name}
		if err := f.env.c.Create(ctx, h); err != nil {
			b.Fatal(err)
		}
		h.Status = status
		if err := f.env.c.Status().Update(ctx, h); err != nil {
			b.Fatal(err)
		}
		f.hooks = append(f.hooks, h)
	}
	return f
}

// round writes every Hook's status at once, then replaces as many bare
// files of the same size at once, and keeps the times.
func (f *burstFloor) round(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	w, err := f.env.c.Watch(ctx, &v1.HookList{}, client.InNamespace("default"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	// Each event is timed on arrival by name and resourceVersion; the
	// versions the writes return say which count (a watch from "" lists the
	// older ones first).
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	go func() {
		for ev := range w.ResultChan() {
			if h, ok := ev.Object.(*v1.Hook); ok {
				at := time.Now()
				mu.Lock()
				arrived[h.Name+"@"+h.ResourceVersion] = at
				mu.Unlock()
			}
		}
	}()
	start := make(chan struct{})
	var g errgroup.Group
	for _, h := range f.hooks {
		g.Go(func() error {
			<-start
			h.Status.LastHeartbeat = &metav1.MicroTime{Time: time.Now()}
			return f.env.c.Status().Update(ctx, h)
		})
	}
	cpu0 := processCPU(b)
	t0 := time.Now()
	close(start)
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		var took []time.Duration
		for _, h := range f.hooks {
			if at, ok := arrived[h.Name+"@"+h.ResourceVersion]; ok {
				took = append(took, at.Sub(t0))
			}
		}
		mu.Unlock()
		if len(took) == len(f.hooks) {
			f.store = append(f.store, took...)
			f.cpu = append(f.cpu, processCPU(b)-cpu0)
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the floor's writes were not all seen within 30s")
		}
		time.Sleep(100 * time.Microsecond)
	}
	size := fileSize(b, filepath.Join(f.env.dir, "store", "hooks", "default", f.hooks[0].Name+".yaml"))
	f.fsync = append(f.fsync, bareBurst(b, filepath.Join(f.env.dir, "bare"), len(f.hooks), size)...)
}

func fileSize(b *testing.B, path string) int {
	b.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return int(fi.Size())
}

// bareBurst replaces n files of size bytes in dir at once, each a temp file
// written, fsynced and renamed over its name, then the directory fsynced,
// and returns how long each took from the start.
func bareBurst(b *testing.B, dir string, n, size int) []time.Duration {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	took := make([]time.Duration, n)
	start := make(chan struct{})
	var g errgroup.Group
	for i := range n {
		g.Go(func() error {
			<-start
			t0 := time.Now()
			name := filepath.Join(dir, fmt.Sprintf("f-%d", i))
			tmp, err := os.CreateTemp(dir, ".tmp-")
			if err != nil {
				return err
			}
			if _, err := tmp.Write(data); err != nil {
				return err
			}
			if err := tmp.Sync(); err != nil {
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), name); err != nil {
				return err
			}
			d, err := os.Open(dir)
			if err != nil {
				return err
			}
			defer func() { _ = d.Close() }()
			if err := d.Sync(); err != nil {
				return err
			}
			took[i] = time.Since(t0)
			return nil
		})
	}
	close(start)
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return took
}
