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

package filestore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestRewriteNeverLosesANewerSave checks the exchange that rewrites an
// adopted hand edit: when a person saved again after the store read the
// file, their save stays; otherwise the store's form replaces it.
func TestRewriteNeverLosesANewerSave(t *testing.T) {
	tests := []struct {
		name      string
		saveAgain bool
		want      string
	}{
		{name: "unchanged since read: the store's form replaces it", want: "store form\n"},
		{name: "saved again since read: the newer save stays", saveAgain: true, want: "newer save\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "obj.yaml")
			if err := os.WriteFile(path, []byte("first edit\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			read, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.saveAgain {
				tmp := path + ".swp"
				if err := os.WriteFile(tmp, []byte("newer save\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}
			err = writeFileAtomicIf(path, []byte("store form\n"), func(replaced string) bool { return isFile(replaced, read) })
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("file holds %q, want %q", got, tt.want)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Fatalf("left behind %d entries, want only the file", len(entries))
			}
		})
	}
}

// save replaces path with a new file holding content, as an editor does.
func save(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestGiveBackKeepsASaveThatLandsDuringIt covers saves that land while the
// store hands a newer save back: each one replaces the store's form at the
// path, and the hand-back must not carry it away with the store's form.
func TestGiveBackKeepsASaveThatLandsDuringIt(t *testing.T) {
	for _, during := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("%d saves during the hand-back", during), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "obj.yaml")
			save(t, path, "first edit\n")
			read, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			save(t, path, "second edit\n")
			checks := 0
			err = writeFileAtomicIf(path, []byte("store form\n"), func(replaced string) bool {
				checks++
				for i := range during {
					save(t, path, fmt.Sprintf("save %d during the hand-back\n", i+1))
				}
				return isFile(replaced, read)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("save %d during the hand-back\n", during)
			if got, err := os.ReadFile(path); err != nil || string(got) != want {
				t.Fatalf("file holds %q (%v), want the newest save %q", got, err, want)
			}
			if checks != 1 {
				t.Fatalf("stillWanted called %d times, want 1", checks)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Fatalf("left behind %d entries, want only the file", len(entries))
			}
		})
	}
}
