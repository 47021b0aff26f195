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

package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-dev/tether/internal/atomicfile"
)

func TestWriteFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "x.md")
	steps := []struct {
		data        string
		wantWritten bool
	}{
		{"one", true},
		{"one", false},
		{"two", true},
	}
	for i, s := range steps {
		written, err := atomicfile.WriteFile(path, []byte(s.data), 0o600)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if written != s.wantWritten {
			t.Errorf("step %d: written = %v, want %v", i, written, s.wantWritten)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != s.data {
			t.Errorf("step %d: content %q, %v; want %q", i, got, err, s.data)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("directory holds %d entries (%v); want only x.md, no temp files left", len(entries), err)
	}
}

func TestWriteFileFailsWithoutTouchingTheTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.md")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chmod(dir, 0o700) }()
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	if _, err := atomicfile.WriteFile(path, []byte("new"), 0o600); err == nil {
		t.Fatal("writing into a read-only directory succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("content %q after a failed write; want old", got)
	}
}
