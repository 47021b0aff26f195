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

package controllers

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// TestRefLooksShareOneLookPerWorkspace: the Checkpoints of a workspace
// verified within maxAge cost one look at its refs, not three git runs
// each; a look older than maxAge is taken again; a ref made after the look
// (a new Checkpoint's) still verifies, and one deleted after it is found
// by the next look; a failed look is not kept.
func TestRefLooksShareOneLookPerWorkspace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "initial")
	var caps []*snapshot.Result
	capture := func(seq int64) *snapshot.Result {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "work.txt"), []byte(strconv.FormatInt(seq, 10)), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := snapshot.Capture(ctx, dir, snapshot.Options{Namespace: "default", Hook: "task", Seq: seq})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for seq := int64(1); seq <= 5; seq++ {
		caps = append(caps, capture(seq))
	}

	var mu sync.Mutex
	reads := 0
	failNext := false
	looks := &refLooks{read: func(ctx context.Context, ws string) (*snapshot.Refs, error) {
		mu.Lock()
		reads++
		fail := failNext
		failNext = false
		mu.Unlock()
		if fail {
			return nil, errors.New("git is not there")
		}
		return snapshot.ReadRefs(ctx, ws)
	}}
	now := time.Unix(1_000_000, 0)
	const maxAge = 5 * time.Second

	var wg sync.WaitGroup
	for range 4 {
		for _, c := range caps {
			wg.Go(func() {
				if err := looks.verify(ctx, now, maxAge, dir, c.Ref, c.Commit); err != nil {
					t.Errorf("verify %s: %v", c.Ref, err)
				}
			})
		}
	}
	wg.Wait()
	if reads != 1 {
		t.Errorf("20 verifications of one workspace took %d looks, want 1", reads)
	}

	made := capture(6)
	if err := looks.verify(ctx, now.Add(time.Second), maxAge, dir, made.Ref, made.Commit); err != nil {
		t.Errorf("a ref made after the look: %v", err)
	}
	if err := looks.verify(ctx, now.Add(time.Second), maxAge, dir, caps[0].Ref, caps[1].Commit); !errors.Is(err, snapshot.ErrRefMoved) {
		t.Errorf("a ref that points elsewhere: %v, want ErrRefMoved", err)
	}
	if reads != 1 {
		t.Errorf("within maxAge: %d looks, want 1", reads)
	}

	if err := snapshot.DeleteRef(ctx, dir, caps[2].Ref, caps[2].Commit); err != nil {
		t.Fatal(err)
	}
	if err := looks.verify(ctx, now.Add(maxAge), maxAge, dir, caps[2].Ref, caps[2].Commit); !errors.Is(err, snapshot.ErrRefMissing) {
		t.Errorf("a ref deleted before a new look: %v, want ErrRefMissing", err)
	}
	if reads != 2 {
		t.Errorf("after maxAge: %d looks, want 2", reads)
	}

	failNext = true
	later := now.Add(3 * maxAge)
	if err := looks.verify(ctx, later, maxAge, dir, caps[3].Ref, caps[3].Commit); err != nil {
		t.Errorf("verify through a failed look: %v", err)
	}
	if err := looks.verify(ctx, later, maxAge, dir, caps[3].Ref, caps[3].Commit); err != nil {
		t.Errorf("verify after a failed look: %v", err)
	}
	if reads != 4 {
		t.Errorf("a failed look was kept: %d looks, want 4", reads)
	}
}
