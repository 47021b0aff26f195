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

package agentsession_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-dev/tether/internal/agent/agentsession"
)

// FuzzReadBinding reads arbitrary bytes as a checkout's binding file: it
// never panics, accepts only valid names, and what it accepts survives a
// write and a read back unchanged.
func FuzzReadBinding(f *testing.F) {
	for _, s := range []string{
		`{"namespace":"default","hook":"task"}`, `{"hook":"task"}`, `{"namespace":"a/b","hook":"task"}`,
		`{"namespace":"default","hook":"../x"}`, `{"hook":"task","extra":1}`, `{"hook":"task"} trailing`,
		`{"hook":`, ``, `null`, `[]`, "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".git", agentsession.BindingDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".git", agentsession.BindingDir, agentsession.BindingFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, _, err := agentsession.ReadBinding(dir)
		if err != nil || b == nil {
			return
		}
		if verr := b.Validate(); verr != nil {
			t.Fatalf("ReadBinding accepted an invalid binding %+v: %v", b, verr)
		}
		if _, err := agentsession.WriteBinding(dir, *b); err != nil {
			t.Fatalf("WriteBinding of an accepted binding: %v", err)
		}
		again, _, err := agentsession.ReadBinding(dir)
		if err != nil || again == nil || *again != *b {
			t.Fatalf("read back %+v, %v; want %+v", again, err, *b)
		}
	})
}
