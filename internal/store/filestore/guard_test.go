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
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// TestUnsafeStoreIsRefused checks that a store whose directory, or a
// directory in it, group or others may write, or another user owns, is
// not served, and that the error names the path, the mode and the fix.
func TestUnsafeStoreIsRefused(t *testing.T) {
	tests := []struct {
		name string
		// rel is the directory made unsafe, relative to the store.
		rel       string
		mode      os.FileMode
		chown     bool
		want      string
		needsRoot bool
	}{
		{name: "store writable by group", rel: ".", mode: 0o770, want: "has mode 0770"},
		{name: "store writable by others", rel: ".", mode: 0o707, want: "has mode 0707"},
		{name: "kind directory writable by group", rel: "workers", mode: 0o775, want: "has mode 0775"},
		{name: "namespace directory writable by others", rel: "hooks/default", mode: 0o757, want: "has mode 0757"},
		{name: "namespace directory owned by another user", rel: "hooks/default", mode: 0o700, chown: true, want: "owned by uid 65534", needsRoot: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needsRoot && os.Geteuid() != 0 {
				t.Skip("needs root")
			}
			dir := filepath.Join(t.TempDir(), "store")
			s := openStore(t, dir)
			ctx := context.Background()
			if err := s.Client().Create(ctx, hook("h")); err != nil {
				t.Fatal(err)
			}
			w := &agentsv1alpha1.Worker{}
			w.Namespace, w.Name, w.Spec.Command = "default", "w", []string{"true"}
			if err := s.Client().Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			path := filepath.Join(dir, tt.rel)
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			if tt.chown {
				if err := os.Chown(path, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			_, err := newStore(dir)
			var unsafe *filestore.UnsafeStoreError
			if !errors.As(err, &unsafe) || unsafe.Problem.Path != filepath.Clean(path) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("open: %v, want a refusal of %s saying %q", err, path, tt.want)
			}
			if !tt.chown && !strings.Contains(err.Error(), "chmod 700 "+filepath.Clean(path)) {
				t.Fatalf("open: %v, want the fix chmod 700 %s", err, path)
			}
			if problems := inspect(t, dir); len(problems) != 1 || problems[0].Path != filepath.Clean(path) {
				t.Fatalf("Inspect: %+v, want the unsafe directory", problems)
			}
		})
	}
}

// TestSymlinksNeverLeadOutside replaces an entry of the store by a
// symbolic link to a copy outside it, before the store is opened or while
// it is open, and checks that creates, updates, status updates and
// deletes write nothing through it, and that Inspect reports it.
func TestSymlinksNeverLeadOutside(t *testing.T) {
	tests := []struct {
		name string
		// link is the path, relative to the store, replaced by a symlink to
		// a copy outside the store.
		link string
		// afterOpen places the link while the store is open.
		afterOpen bool
	}{
		{name: "namespace directory", link: "hooks/default"},
		{name: "kind directory", link: "hooks"},
		{name: "journal", link: "journal"},
		{name: "lock file", link: ".lock"},
		{name: "object file", link: "hooks/default/existing.yaml"},
		{name: "namespace directory, after open", link: "hooks/default", afterOpen: true},
		{name: "kind directory, after open", link: "hooks", afterOpen: true},
		{name: "lock file, after open", link: ".lock", afterOpen: true},
		{name: "object file, after open", link: "hooks/default/existing.yaml", afterOpen: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "store")
			s := openStore(t, dir)
			c := s.Client()
			h := hook("existing")
			if err := c.Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			if !tt.afterOpen {
				_ = s.Close()
			}
			// Move the entry outside and link it back: the outside copy is
			// exactly what the store would write through the link.
			outside := filepath.Join(t.TempDir(), "outside")
			if err := os.Rename(filepath.Join(dir, tt.link), outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, tt.link)); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, outside)

			var err error
			if !tt.afterOpen {
				s, err = newStore(dir)
			}
			if err == nil {
				defer func() { _ = s.Close() }()
				c = s.Client()
				if err := c.Create(ctx, hook("new")); err == nil && tt.link != "hooks/default/existing.yaml" {
					t.Errorf("a create through a symlinked %s succeeded", tt.name)
				}
				// Update, heartbeat and delete the object behind the link, with
				// the version last read: a Get may refuse it.
				u := h.DeepCopy()
				u.Spec.Goal = "through the link"
				_ = c.Update(ctx, u)
				u = h.DeepCopy()
				u.Status.State = "step_pending"
				_ = c.Status().Update(ctx, u)
				_ = c.Delete(ctx, h.DeepCopy())
			} else if !strings.Contains(err.Error(), "symbolic link") {
				t.Fatalf("open: %v, want a refusal of the symlink", err)
			}
			if after := snapshot(t, outside); !equalSnapshots(before, after) {
				t.Fatalf("the store wrote outside through a symlinked %s:\nbefore %v\nafter  %v", tt.name, before, after)
			}
			if fi, err := os.Lstat(filepath.Join(dir, tt.link)); err == nil && fi.Mode()&os.ModeSymlink == 0 && tt.link != "hooks/default/existing.yaml" {
				t.Fatalf("the symlinked %s was replaced by a %s", tt.name, fi.Mode().Type())
			}
			if _, err := os.Lstat(filepath.Join(dir, tt.link)); err != nil {
				return // the object's link was deleted, as the object was: nothing left to report
			}
			problems := inspect(t, dir)
			found := false
			for _, p := range problems {
				found = found || p.Path == filepath.Join(dir, tt.link) && strings.Contains(p.Reason, "symbolic link")
			}
			if !found {
				t.Fatalf("Inspect: %+v, want the symlinked %s", problems, tt.name)
			}
		})
	}
}

// TestListReadsNoNameBehindASymlink lists a kind whose namespace or kind
// directory is a symbolic link: the link is reported, and no entry behind
// it is even named in a report, since the store never reads through it.
func TestListReadsNoNameBehindASymlink(t *testing.T) {
	for _, link := range []string{"hooks/default", "hooks"} {
		for _, namespace := range []string{"default", ""} {
			t.Run(link+" listed in namespace "+strconv.Quote(namespace), func(t *testing.T) {
				ctx := context.Background()
				dir := filepath.Join(t.TempDir(), "store")
				s := openStore(t, dir)
				must(t, s.Client().Create(ctx, hook("behind")))
				_ = s.Close()
				outside := filepath.Join(t.TempDir(), "outside")
				must(t, os.Rename(filepath.Join(dir, link), outside))
				must(t, os.Symlink(outside, filepath.Join(dir, link)))
				logs := &errorLog{}
				s, err := newStore(dir, func(o *filestore.Options) { o.Log = logs.logger() })
				if err != nil {
					return // refused at once: nothing listed
				}
				defer func() { _ = s.Close() }()
				list := &agentsv1alpha1.HookList{}
				if err := s.Client().List(ctx, list, client.InNamespace(namespace)); err == nil && len(list.Items) > 0 {
					t.Fatalf("listed %d Hooks through the link", len(list.Items))
				}
				if n := logs.count("behind"); n > 0 {
					t.Fatalf("a report named an entry behind the link: %v", logs.lines)
				}
			})
		}
	}
}

func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalSnapshots(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestJournalSymlinkedWhileOpenIsRefused replaces the journal of an open
// store by a symbolic link: the next write (a heartbeat, say) fails rather
// than append to the file elsewhere.
func TestJournalSymlinkedWhileOpenIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	s := openStore(t, dir)
	c := s.Client()
	h := hook("beating")
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "journal")
	if err := os.Rename(filepath.Join(dir, "journal"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "journal")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, outside)
	h.Annotations = map[string]string{"beat": "1"}
	if err := c.Update(ctx, h); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("update through a symlinked journal: %v, want a refusal", err)
	}
	if after := snapshot(t, outside); !equalSnapshots(before, after) {
		t.Fatal("the store appended to a journal outside the store")
	}
}
