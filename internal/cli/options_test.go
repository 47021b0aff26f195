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

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResolveStoreDir(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	noStore := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", StoreDirName), 0o700); err != nil {
		t.Fatal(err)
	}
	// A regular file named .tether is not a store and must be skipped.
	if err := os.WriteFile(filepath.Join(root, "a", "b", StoreDirName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, flag, env, wd, want string
	}{
		{name: "flag wins", flag: "/srv/store", env: "/env/store", wd: deep, want: "/srv/store"},
		{name: "env next", env: "/env/store", wd: deep, want: "/env/store"},
		{name: "nearest upward", wd: deep, want: filepath.Join(root, "a", StoreDirName)},
		{name: "in the directory itself", wd: filepath.Join(root, "a"), want: filepath.Join(root, "a", StoreDirName)},
		{name: "none found", wd: noStore, want: filepath.Join(noStore, StoreDirName)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveStoreDir(tt.flag, tt.env, tt.wd)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	gr := schema.GroupResource{Group: "agents.tether.dev", Resource: "hooks"}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"not found", apierrors.NewNotFound(gr, "x"), ExitConflictOrNotFound},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("stale")), ExitConflictOrNotFound},
		{"already exists", apierrors.NewAlreadyExists(gr, "x"), ExitConflictOrNotFound},
		{"invalid", apierrors.NewBadRequest("spec.goal: Required value"), ExitUsage},
		{"plain", errors.New("bad flag"), ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Fatalf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
