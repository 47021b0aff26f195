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

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadVerbsNeverCreateAStore runs each read verb on a store path that
// does not exist: it says there is no store there, exits 1 and creates
// nothing.
func TestReadVerbsNeverCreateAStore(t *testing.T) {
	verbs := [][]string{
		{"get", "hooks"},
		{"describe", "hook", "x"},
		{"recover", "x"},
		{"events"},
	}
	for _, verb := range verbs {
		t.Run(strings.Join(verb, " "), func(t *testing.T) {
			typo := filepath.Join(t.TempDir(), "typo")
			_, stderr, code := run(t, append([]string{"--store", typo}, verb...)...)
			if code != 1 || !strings.Contains(stderr, "there is no store at "+typo) {
				t.Fatalf("exit %d, stderr %q; want exit 1 saying there is no store at %s", code, stderr, typo)
			}
			if _, err := os.Lstat(typo); !os.IsNotExist(err) {
				t.Fatalf("%s was created: %v", typo, err)
			}
		})
	}
}

// TestUnsafeStoreIsRefusedByTheCLI makes the store writable by group and
// checks that a verb refuses it, naming the path, the mode and the fix.
func TestUnsafeStoreIsRefusedByTheCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if _, stderr, code := run(t, "--store", dir, "apply", "-f", "../../config/samples/agents_v1alpha1_hook.yaml"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, stderr)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "--store", dir, "get", "hooks")
	if code == 0 || !strings.Contains(stderr, dir+" has mode 0770") || !strings.Contains(stderr, "chmod 700 "+dir) {
		t.Fatalf("exit %d, stderr %q; want a refusal naming %s, its mode and chmod 700", code, stderr, dir)
	}
}
