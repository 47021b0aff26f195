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
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// TestNonDirectoryWhereADirectoryBelongs puts a FIFO or a regular file where
// the store keeps a namespace or kind directory. Lists in other namespaces
// and of other kinds keep working, a list of the broken place is empty
// rather than an error (and never blocks on the FIFO), the entry is logged
// once, and Inspect (doctor) reports it.
func TestNonDirectoryWhereADirectoryBelongs(t *testing.T) {
	fifo := func(path string) error { return syscall.Mkfifo(path, 0o600) }
	file := func(path string) error { return os.WriteFile(path, []byte("x\n"), 0o600) }
	tests := []struct {
		name   string
		rel    string
		place  func(path string) error
		reason string
		// listNS is the namespace whose Hook list must come back empty.
		listNS string
	}{
		{"a FIFO at a namespace directory", "hooks/ns2", fifo, "is a FIFO where the store keeps a directory", "ns2"},
		{"a regular file at a namespace directory", "hooks/ns2", file, "is a regular file where the store keeps a directory", "ns2"},
		{"a FIFO at a kind directory", "workers", fifo, "is a FIFO where the store keeps a directory", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tt.rel)
			if err := tt.place(path); err != nil {
				t.Fatal(err)
			}
			logs := &errorLog{}
			s := openStore(t, dir, func(o *filestore.Options) { o.Log = logs.logger() })
			c := s.Client()
			if err := c.Create(ctx, hook("good")); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				hooks := &agentsv1alpha1.HookList{}
				if err := c.List(ctx, hooks); err != nil || len(hooks.Items) != 1 || hooks.Items[0].Name != "good" {
					t.Fatalf("list hooks: %v %v, want only good", err, hooks.Items)
				}
				if tt.listNS != "" {
					if err := c.List(ctx, hooks, client.InNamespace(tt.listNS)); err != nil || len(hooks.Items) != 0 {
						t.Fatalf("list hooks in %s: %v %v, want none and no error", tt.listNS, err, hooks.Items)
					}
				}
				workers := &agentsv1alpha1.WorkerList{}
				if err := c.List(ctx, workers); err != nil {
					t.Fatalf("list workers: %v", err)
				}
			}
			if n := logs.count(path); n != 1 {
				t.Errorf("%d error log lines name %s, want 1: %v", n, path, logs.lines)
			}
			if err := c.Create(ctx, hook("new")); err != nil {
				t.Fatalf("a create elsewhere failed: %v", err)
			}
			problems := inspect(t, dir)
			if len(problems) != 1 || problems[0].Path != path || problems[0].Reason != tt.reason || problems[0].Fix != "remove it: rm "+path {
				t.Fatalf("Inspect: %+v, want one problem of %s: %q", problems, path, tt.reason)
			}
		})
	}
}
