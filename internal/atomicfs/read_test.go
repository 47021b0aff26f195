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

package atomicfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tether-dev/tether/internal/atomicfs"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("twelve bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		limit      int64
		want       string
		wantErr    func(error) bool
	}{
		{name: "a regular file within the limit", path: file, limit: 12, want: "twelve bytes"},
		{name: "a regular file over the limit", path: file, limit: 11, wantErr: func(err error) bool { return strings.Contains(err.Error(), "larger than 11 bytes") }},
		{name: "a symbolic link to it", path: link, limit: 100, wantErr: func(err error) bool { return errors.Is(err, atomicfs.ErrSymlink) }},
		{name: "a FIFO, without blocking", path: fifo, limit: 100, wantErr: func(err error) bool { return strings.Contains(err.Error(), "not a regular file") }},
		{name: "a directory", path: dir, limit: 100, wantErr: func(err error) bool { return strings.Contains(err.Error(), "not a regular file") }},
		{name: "nothing", path: filepath.Join(dir, "missing"), limit: 100, wantErr: func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := atomicfs.ReadRegular(c.path, c.limit)
			if c.wantErr != nil {
				if err == nil || !c.wantErr(err) {
					t.Fatalf("ReadRegular(%s) = %q, %v; want the refusal", c.path, data, err)
				}
				return
			}
			if err != nil || string(data) != c.want {
				t.Fatalf("ReadRegular(%s) = %q, %v; want %q", c.path, data, err, c.want)
			}
		})
	}
}
