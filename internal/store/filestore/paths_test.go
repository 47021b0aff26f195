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

package filestore_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// pathOpEnv names, in the child process of TestCallsPassFewFiles, the
// call TestPathChild makes (pathOps' keys, or "none").
const pathOpEnv = "TETHER_FILESTORE_PATH_OP"

// pathRepeats is how often the child makes its call. A statement counts
// as on the call's path only when it ran at least that many times more
// than in a child that makes no call, so that work a background goroutine
// happened to do in one run is not counted.
const pathRepeats = 3

// pathOp is a call whose path TestCallsPassFewFiles holds: its name, the
// most files of the store's source its statements may run in, and the
// call, made the i-th time on h, an existing Hook.
type pathOp struct {
	name string
	max  int
	call func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook, i int) error
}

// pathOps are the calls whose paths TestCallsPassFewFiles holds, each
// with the most files of the store's source its statements may run in.
var pathOps = []pathOp{
	{"get", 4, func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook, _ int) error {
		return c.Get(ctx, client.ObjectKeyFromObject(h), h)
	}},
	{"update", 7, func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook, i int) error {
		h.Spec.Goal = "goal " + strconv.Itoa(i)
		return c.Update(ctx, h)
	}},
	{"status-update", 7, func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook, i int) error {
		h.Status.ObservedGeneration = int64(i + 1)
		return c.Status().Update(ctx, h)
	}},
}

// TestPathChild is the child process of TestCallsPassFewFiles: it opens
// a store, creates a Hook and reads it, and then makes the call named by
// pathOpEnv pathRepeats times. Run alone, it does nothing.
func TestPathChild(t *testing.T) {
	op, ok := os.LookupEnv(pathOpEnv)
	if !ok {
		t.Skip("the child of TestCallsPassFewFiles")
	}
	s, err := newStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := context.Background()
	c := s.Client()
	h := hook("path")
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(h), h); err != nil {
		t.Fatal(err)
	}
	s.AwaitRemovals()
	if op == "none" {
		return
	}
	i := slices.IndexFunc(pathOps, func(p pathOp) bool { return p.name == op })
	if i < 0 {
		t.Fatalf("no call %q", op)
	}
	for n := range pathRepeats {
		if err := pathOps[i].call(ctx, c, h, n); err != nil {
			t.Fatal(err)
		}
		s.AwaitRemovals()
	}
}

// TestCallsPassFewFiles holds the number of the store's source files
// (this package and any below it, tests excluded) that a plain call runs
// statements in, from the client method down to the disk: a child process
// built with coverage makes the call on an existing Hook, and the files
// whose statements ran for it, beyond what the same child ran without the
// call, are counted. It fails when a call passes more files than pathOps
// allows, and names them.
func TestCallsPassFewFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package's tests with coverage")
	}
	if _, ok := os.LookupEnv(pathOpEnv); ok {
		t.Skip("in the child")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the child with")
	}
	pkg, err := exec.Command(goTool, "list", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	pkgPath := strings.TrimSpace(string(pkg))
	dir := t.TempDir()
	bin := filepath.Join(dir, "child.test")
	build := exec.Command(goTool, "test", "-c", "-o", bin, "-covermode=count", "-coverpkg="+pkgPath+"/...", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the child: %v\n%s", err, out)
	}
	run := func(op string) map[string]int {
		profile := filepath.Join(dir, op+".cover")
		child := exec.Command(bin, "-test.run", "^TestPathChild$", "-test.count", "1", "-test.coverprofile", profile)
		child.Dir = "."
		child.Env = append(os.Environ(), pathOpEnv+"="+op)
		if out, err := child.CombinedOutput(); err != nil {
			t.Fatalf("the child making %s: %v\n%s", op, err, out)
		}
		return readProfile(t, profile)
	}
	base := run("none")
	for _, op := range pathOps {
		counts := run(op.name)
		files := map[string]bool{}
		for block, n := range counts {
			if n-base[block] >= pathRepeats {
				file, _, _ := strings.Cut(block, ":")
				files[strings.TrimPrefix(file, pkgPath+"/")] = true
			}
		}
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		slices.Sort(names)
		t.Logf("%s passes %d files: %s", op.name, len(names), strings.Join(names, " "))
		if len(names) == 0 {
			t.Errorf("%s runs no statement of the store: the measure is broken", op.name)
		}
		if len(names) > op.max {
			t.Errorf("%s passes %d files, more than %d: %s", op.name, len(names), op.max, strings.Join(names, " "))
		}
	}
}

// readProfile reads a coverage profile in count mode: the times each
// block ("file:start,end") ran.
func readProfile(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("%s: not a profile line: %q", path, line)
		}
		n, err := strconv.Atoi(fields[2])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		counts[fields[0]] += n
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(counts) == 0 {
		t.Fatalf("%s: an empty profile", path)
	}
	return counts
}
