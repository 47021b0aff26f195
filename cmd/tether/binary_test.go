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
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/tether-dev/tether/controllers"
)

// sizeBudget is the most the shipped binary may weigh, in bytes (see
// docs/design.md, "Build"). The static, stripped build is about 68.5 MB; a
// build with cgo on is about 111 MB, because kustomize's link of Go's plugin
// package disables dead-code elimination of methods.
const sizeBudget = 70_000_000

// TestShippedBinary checks that the binary TestMain built, the same way
// `make build` does, is what ships: built without cgo and with -trimpath,
// statically linked, stripped, and within the size budget.
func TestShippedBinary(t *testing.T) {
	info, err := buildinfo.ReadFile(tetherBin)
	if err != nil {
		t.Fatalf("reading the build info: %v", err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if got := settings["CGO_ENABLED"]; got != "0" {
		t.Errorf("build info: CGO_ENABLED=%q, want 0: build with CGO_ENABLED=0", got)
	}
	if got := settings["-trimpath"]; got != "true" {
		t.Errorf("build info: -trimpath=%q, want true: build with -trimpath", got)
	}

	st, err := os.Stat(tetherBin)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > sizeBudget {
		t.Errorf("the binary is %s, over its budget of %s: find what grew it (go tool nm -size -sort size on an unstripped build), or raise the budget in docs/design.md and here with the reason",
			megabytes(st.Size()), megabytes(sizeBudget))
	}
	t.Logf("binary: %s (budget %s), %s", megabytes(st.Size()), megabytes(sizeBudget), info.GoVersion)

	// The test failpoints are compiled in only with their build tag: the
	// name of the variable they read is in the binary exactly when one is.
	data, err := os.ReadFile(tetherBin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(controllers.FailpointRestartedEnv)) {
		t.Errorf("the binary contains the test failpoint %s: it must be built only with the %s build tag", controllers.FailpointRestartedEnv, controllers.FailpointTag)
	}

	if runtime.GOOS != "linux" {
		t.Skipf("the ELF checks run on linux, not %s", runtime.GOOS)
	}
	f, err := elf.Open(tetherBin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a PT_INTERP program header: it is dynamically linked")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatalf("reading DT_NEEDED: %v", err)
	}
	if len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v: it is dynamically linked", libs)
	}
	for _, name := range []string{".symtab", ".debug_info", ".zdebug_info"} {
		if f.Section(name) != nil {
			t.Errorf("the binary has a %s section: it is not stripped (link with -s -w)", name)
		}
	}
	for _, sec := range f.Sections {
		if strings.HasPrefix(sec.Name, ".debug_") || strings.HasPrefix(sec.Name, ".zdebug_") {
			t.Errorf("the binary has DWARF section %s: link with -w", sec.Name)
		}
	}
}

func megabytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
