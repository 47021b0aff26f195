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
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestReadRefsAgreesWithVerify: one look answers every case as Verify
// does, with the same error and message: a present ref, one moved, one
// deleted, one never made, and a ref whose commit lost its tree.
func TestReadRefsAgreesWithVerify(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	var caps []*snapshot.Result
	for i := 1; i <= 4; i++ {
		write(t, dir, "f", string(rune('a'+i)))
		res, err := snapshot.Capture(ctx, dir, opts(int64(i)))
		if err != nil {
			t.Fatal(err)
		}
		caps = append(caps, res)
	}
	if err := snapshot.DeleteRef(ctx, dir, caps[1].Ref, caps[1].Commit); err != nil {
		t.Fatal(err)
	}
	// A commit whose tree object is gone: the snapshot of a lone file
	// content no other commit has.
	write(t, dir, "lonely", "only here")
	lost, err := snapshot.Capture(ctx, dir, opts(9))
	if err != nil {
		t.Fatal(err)
	}
	tree := strings.TrimSpace(gitT(t, dir, "rev-parse", lost.Commit+"^{tree}"))
	if err := os.Remove(filepath.Join(dir, ".git", "objects", tree[:2], tree[2:])); err != nil {
		t.Fatal(err)
	}

	refs, err := snapshot.ReadRefs(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		ref, commit string
		want        error
	}{
		{"present", caps[0].Ref, caps[0].Commit, nil},
		{"another present", caps[3].Ref, caps[3].Commit, nil},
		{"points elsewhere", caps[2].Ref, caps[0].Commit, snapshot.ErrRefMoved},
		{"deleted", caps[1].Ref, caps[1].Commit, snapshot.ErrRefMissing},
		{"never made", snapshot.Ref("default", "task", 99), caps[0].Commit, snapshot.ErrRefMissing},
		{"tree gone", lost.Ref, lost.Commit, snapshot.ErrCommitMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !refs.Covers(tt.ref) {
				t.Fatalf("Covers(%s) = false", tt.ref)
			}
			got, want := refs.Verify(tt.ref, tt.commit), snapshot.Verify(ctx, dir, tt.ref, tt.commit)
			if !errors.Is(got, tt.want) || !errors.Is(want, tt.want) {
				t.Fatalf("Refs.Verify = %v, Verify = %v, want %v", got, want, tt.want)
			}
			if got != nil && got.Error() != want.Error() {
				t.Errorf("Refs.Verify says %q, Verify %q", got, want)
			}
		})
	}
	if refs.Covers("refs/heads/main") {
		t.Error("a look covers refs/heads/main, which it does not read")
	}
	if _, err := snapshot.ReadRefs(ctx, filepath.Join(dir, "nope")); !errors.Is(err, snapshot.ErrMissingWorkspace) {
		t.Errorf("ReadRefs of a missing workspace = %v", err)
	}
}
