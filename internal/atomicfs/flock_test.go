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

package atomicfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTryLock checks the conflicts between two holders, each its own open
// of the lock file, as two processes would have.
func TestTryLock(t *testing.T) {
	tests := []struct {
		name       string
		held       LockMode
		want       LockMode
		release    func(f *os.File) error
		wantLocked bool
	}{
		{name: "shared beside shared", held: Shared, want: Shared},
		{name: "exclusive beside shared", held: Shared, want: Exclusive, wantLocked: true},
		{name: "shared beside exclusive", held: Exclusive, want: Shared, wantLocked: true},
		{name: "exclusive beside exclusive", held: Exclusive, want: Exclusive, wantLocked: true},
		{name: "exclusive after unlock", held: Exclusive, want: Exclusive, release: Unlock},
		{name: "exclusive after the holder closed", held: Exclusive, want: Exclusive, release: (*os.File).Close},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".lock")
			open := func() *os.File {
				f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = f.Close() })
				return f
			}
			holder, other := open(), open()
			if err := Lock(holder, tt.held); err != nil {
				t.Fatal(err)
			}
			if tt.release != nil {
				if err := tt.release(holder); err != nil {
					t.Fatal(err)
				}
			}
			err := TryLock(other, tt.want)
			if got := errors.Is(err, ErrLocked); got != tt.wantLocked || err != nil && !tt.wantLocked {
				t.Fatalf("TryLock = %v, want locked=%v", err, tt.wantLocked)
			}
		})
	}
}

// TestLockWaitsForTheHolder checks that Lock blocks until the conflicting
// holder unlocks.
func TestLockWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	holder, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Close() }()
	waiter, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = waiter.Close() }()
	if err := Lock(holder, Exclusive); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- Lock(waiter, Shared) }()
	select {
	case err := <-got:
		t.Fatalf("Lock returned %v while the holder held the lock", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := Unlock(holder); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock = %v after the holder unlocked", err)
	}
}
