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

package testsupport

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/store/filestore"
)

// WithoutFsync makes a store write like the filesystem and skip every
// fsync: for a benchmark's setup, whose durability is not what it measures.
func WithoutFsync(o *filestore.Options) { o.IO = noSyncIO{} }

type noSyncIO struct{}

func (noSyncIO) Write(f *os.File, b []byte) (int, error) { return f.Write(b) }
func (noSyncIO) Sync(*os.File) error                     { return nil }

// Skip100k skips a benchmark of 100,000 objects unless -bench names it
// (-bench 100k): `make bench`'s -bench . leaves it out, for its minutes of
// setup.
func Skip100k(b *testing.B) {
	b.Helper()
	if f := flag.Lookup("test.bench"); f == nil || !strings.Contains(f.Value.String(), "100k") {
		b.Skip("100,000 objects: run with -bench 100k")
	}
}

// BuildTool builds the program hack/NAME for a benchmark and returns the
// binary's path.
func BuildTool(tb testing.TB, name string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, "github.com/tether-dev/tether/hack/"+name)
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building hack/%s: %v\n%s", name, err, out)
	}
	return bin
}
