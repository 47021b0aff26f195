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

package apply_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/kubectl/apply"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.yml", "c.json", "notes.txt", "sub/d.yaml", "sub/deeper/e.yaml"} {
		path := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return r }
	for _, tt := range []struct {
		name      string
		paths     []string
		recursive bool
		want      []string
		wantErr   string
	}{
		{name: "a file", paths: []string{filepath.Join(dir, "notes.txt")}, want: []string{"notes.txt"}},
		{name: "a directory's manifests in order", paths: []string{dir}, want: []string{"a.yml", "b.yaml", "c.json"}},
		{name: "recursive", paths: []string{dir}, recursive: true, want: []string{"a.yml", "b.yaml", "c.json", "sub/d.yaml", "sub/deeper/e.yaml"}},
		{name: "stdin and a file", paths: []string{"-", filepath.Join(dir, "b.yaml")}, want: []string{apply.StdinName, "b.yaml"}},
		{name: "missing path", paths: []string{filepath.Join(dir, "nope.yaml")}, wantErr: "does not exist"},
		{name: "directory without manifests", paths: []string{filepath.Join(dir, "empty")}, wantErr: "no manifest files"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := apply.Read(tt.paths, tt.recursive, strings.NewReader("from stdin"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range got {
				name := s.Name
				if name != apply.StdinName {
					name = rel(name)
					if string(s.Data) != name {
						t.Errorf("%s holds %q", name, s.Data)
					}
				} else if string(s.Data) != "from stdin" {
					t.Errorf("stdin holds %q", s.Data)
				}
				names = append(names, name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("read %v, want %v", names, tt.want)
			}
		})
	}
}
