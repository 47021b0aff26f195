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
	"reflect"
	"testing"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestClassify checks which changes since a snapshot are lost work
// (deleted, or back to the base) and which are further work or other
// local changes, on real repositories, and that it writes nothing.
func TestClassify(t *testing.T) {
	cases := []struct {
		name     string
		change   func(t *testing.T, dir string)
		want     []string // "how path"
		wantLost []string
	}{
		{name: "nothing changed", change: func(*testing.T, string) {}},
		{name: "all lost: checkout and clean", change: func(t *testing.T, dir string) {
			gitT(t, dir, "checkout", "--", ".")
			gitT(t, dir, "clean", "-fdq")
		}, want: []string{"deleted lib/new.go", "deleted notes.txt", "reverted tracked.txt"},
			wantLost: []string{"lib/new.go", "notes.txt", "tracked.txt"}},
		{name: "partially lost: one file deleted", change: func(t *testing.T, dir string) { remove(t, dir, "lib/new.go") },
			want: []string{"deleted lib/new.go"}, wantLost: []string{"lib/new.go"}},
		{name: "a committed file reverted", change: func(t *testing.T, dir string) { gitT(t, dir, "checkout", "--", "tracked.txt") },
			want: []string{"reverted tracked.txt"}, wantLost: []string{"tracked.txt"}},
		{name: "modified further is not lost", change: func(t *testing.T, dir string) { write(t, dir, "tracked.txt", "more work\n") },
			want: []string{"modified tracked.txt"}},
		{name: "lost with other local changes", change: func(t *testing.T, dir string) {
			remove(t, dir, "lib/new.go")
			write(t, dir, "other.txt", "other\n")
			write(t, dir, "lib/code.go", "package lib // edited\n")
		}, want: []string{"modified lib/code.go", "deleted lib/new.go", "added other.txt"}, wantLost: []string{"lib/new.go"}},
		{name: "reverted to a HEAD committed after the snapshot", change: func(t *testing.T, dir string) {
			write(t, dir, "tracked.txt", "committed later\n")
			gitT(t, dir, "commit", "-qam", "later")
		}, want: []string{"reverted tracked.txt"}, wantLost: []string{"tracked.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := newRepo(t)
			write(t, dir, "tracked.txt", "work in progress\n")
			write(t, dir, "lib/new.go", "package lib // new\n")
			write(t, dir, "notes.txt", "untracked notes\n")
			res, err := snapshot.Capture(ctx, dir, opts(1))
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, dir)
			before, objects := stateOf(t, dir), gitT(t, dir, "count-objects", "-v")
			changes, err := snapshot.Classify(ctx, dir, res.Commit, res.Head)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range changes {
				got = append(got, c.How+" "+c.Path)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Classify = %q, want %q", got, tc.want)
			}
			if lost := snapshot.LostPaths(changes); !reflect.DeepEqual(lost, tc.wantLost) {
				t.Errorf("LostPaths = %q, want %q", lost, tc.wantLost)
			}
			if after := stateOf(t, dir); !reflect.DeepEqual(before, after) {
				t.Error("Classify changed the user's git state")
			}
			if after := gitT(t, dir, "count-objects", "-v"); after != objects {
				t.Errorf("Classify wrote objects:\n%s\nthen\n%s", objects, after)
			}
		})
	}
}
