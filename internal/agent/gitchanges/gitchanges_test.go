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

package gitchanges_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/gitchanges"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []string
		wantErr bool
	}{
		{"empty", "", nil, false},
		{"modified and untracked", " M b.go\x00?? a.go\x00", []string{"a.go", "b.go"}, false},
		{"rename lists both", "R  new.go\x00old.go\x00", []string{"new.go", "old.go"}, false},
		{"spaces in names", "A  dir/with space.go\x00", []string{"dir/with space.go"}, false},
		{"duplicates", "MM x\x00 M x\x00", []string{"x"}, false},
		{"malformed", "M\x00", nil, true},
		{"rename without original", "R  new.go\x00", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gitchanges.Parse([]byte(tt.out))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Parse = %q, want %q", got, tt.want)
			}
		})
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChanged(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	write(t, filepath.Join(dir, "kept.go"), "package x\n")
	write(t, filepath.Join(dir, "edited.go"), "package x\n")
	write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "init")

	write(t, filepath.Join(dir, "edited.go"), "package y\n")
	write(t, filepath.Join(dir, "sub", "new file.go"), "package z\n")
	write(t, filepath.Join(dir, "debug.log"), "ignored\n")

	got, err := gitchanges.Changed(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"edited.go", "sub/new file.go"}; !slices.Equal(got, want) {
		t.Fatalf("Changed = %q, want %q", got, want)
	}

	_, err = gitchanges.Changed(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "git status") {
		t.Fatalf("outside a repository: %v", err)
	}
}
