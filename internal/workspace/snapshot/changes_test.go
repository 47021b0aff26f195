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

package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestChanges compares the working tree with a snapshot that holds an
// untracked file and a symlink, and checks that the comparison writes
// nothing: no object, no index refresh.
func TestChanges(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string // "STATUS path"
	}{
		{name: "nothing changed, untracked file and symlink in the snapshot", change: func(*testing.T, string) {}},
		{name: "a tracked file modified", change: func(t *testing.T, dir string) { write(t, dir, "tracked.txt", "v2\n") }, want: []string{"M tracked.txt"}},
		{name: "an untracked file modified", change: func(t *testing.T, dir string) { write(t, dir, "notes.txt", "more\n") }, want: []string{"M notes.txt"}},
		{name: "a new file with a space", change: func(t *testing.T, dir string) { write(t, dir, "new file.txt", "n\n") }, want: []string{"A new file.txt"}},
		{name: "a tracked file deleted", change: func(t *testing.T, dir string) { remove(t, dir, "lib/code.go") }, want: []string{"D lib/code.go"}},
		{name: "an untracked file deleted", change: func(t *testing.T, dir string) { remove(t, dir, "notes.txt") }, want: []string{"D notes.txt"}},
		{name: "a symlink retargeted", change: func(t *testing.T, dir string) {
			remove(t, dir, "link")
			symlink(t, dir, "lib", "link")
		}, want: []string{"M link"}},
		{name: "a file became a symlink", change: func(t *testing.T, dir string) {
			remove(t, dir, "tracked.txt")
			symlink(t, dir, "notes.txt", "tracked.txt")
		}, want: []string{"T tracked.txt"}},
		{name: "an ignored file is not listed", change: func(t *testing.T, dir string) { write(t, dir, "debug.log", "x\n") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := newRepo(t)
			write(t, dir, "notes.txt", "untracked\n")
			symlink(t, dir, "tracked.txt", "link")
			res, err := snapshot.Capture(ctx, dir, opts(1))
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, dir)
			before, objects := stateOf(t, dir), gitT(t, dir, "count-objects", "-v")
			files, truncated, err := snapshot.Changes(ctx, dir, res.Commit, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Status+" "+f.Path)
			}
			if !reflect.DeepEqual(got, tc.want) || truncated {
				t.Errorf("Changes = %q (truncated %t), want %q", got, truncated, tc.want)
			}
			if after := stateOf(t, dir); !reflect.DeepEqual(before, after) {
				t.Error("Changes changed the user's git state")
			}
			if after := gitT(t, dir, "count-objects", "-v"); after != objects {
				t.Errorf("Changes wrote objects:\n%s\nthen\n%s", objects, after)
			}
		})
	}
	t.Run("limit", func(t *testing.T) {
		ctx := context.Background()
		dir := newRepo(t)
		res, err := snapshot.Capture(ctx, dir, opts(1))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"a", "b", "c"} {
			write(t, dir, n, n)
		}
		files, truncated, err := snapshot.Changes(ctx, dir, res.Commit, 2)
		if err != nil || len(files) != 2 || !truncated || files[0].Path != "a" || files[1].Path != "b" {
			t.Errorf("Changes with limit 2 = %+v, %t, %v", files, truncated, err)
		}
	})
	if _, _, err := snapshot.Changes(context.Background(), t.TempDir(), "HEAD", 0); err == nil {
		t.Error("Changes outside a repository gave no error")
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, dir, target, name string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveIndex(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	if _, err := snapshot.Capture(ctx, dir, opts(1)); err != nil {
		t.Fatal(err)
	}
	indexes, _ := filepath.Glob(filepath.Join(dir, ".git", "tether", "index", "*", "*.index"))
	if len(indexes) != 1 {
		t.Fatalf("indexes after a capture: %q", indexes)
	}
	stale := indexes[0] + ".123.tmp"
	write(t, filepath.Dir(stale), filepath.Base(stale), "x")
	ns, hook := filepath.Base(filepath.Dir(indexes[0])), strings.TrimSuffix(filepath.Base(indexes[0]), ".index")
	for _, bad := range [][2]string{{ns, "../x"}, {"..", hook}, {ns, ""}, {"a/b", hook}} {
		if err := snapshot.RemoveIndex(ctx, dir, bad[0], bad[1]); err == nil {
			t.Errorf("RemoveIndex(%q, %q) accepted a name that is not plain", bad[0], bad[1])
		}
	}
	if err := snapshot.RemoveIndex(ctx, dir, ns, hook); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{indexes[0], stale} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	if err := snapshot.RemoveIndex(ctx, dir, ns, hook); err != nil {
		t.Errorf("a second RemoveIndex: %v", err)
	}
}
