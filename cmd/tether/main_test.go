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
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var tetherBin string

// TestMain builds the real binary once; the tests drive it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tether-e2e-")
	if err != nil {
		panic(err)
	}
	tetherBin = filepath.Join(dir, "tether")
	build := exec.Command("go", "build", "-ldflags",
		"-X github.com/tether-dev/tether/internal/version.Version=v9.9.9-test -X github.com/tether-dev/tether/internal/version.Commit=abc123",
		"-o", tetherBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building tether: " + err.Error())
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(tetherBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	default:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestVersion(t *testing.T) {
	out, _, code := run(t, "version")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"v9.9.9-test", "abc123", runtime.Version()} {
		if !strings.Contains(out, want) {
			t.Errorf("version output %q lacks %q", out, want)
		}
	}

	out, _, code = run(t, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var info map[string]string
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("version -o json: %v: %q", err, out)
	}
	if info["version"] != "v9.9.9-test" || info["commit"] != "abc123" || info["goVersion"] != runtime.Version() {
		t.Errorf("version -o json = %v", info)
	}

	_, stderr, code := run(t, "version", "-o", "xml")
	if code != 1 || !strings.Contains(stderr, "--output") {
		t.Errorf("version -o xml: exit %d, stderr %q; want exit 1 naming --output", code, stderr)
	}
}

func TestGlobalFlags(t *testing.T) {
	out, _, code := run(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"--store", "--cluster", "--kubeconfig", "--context", "-n, --namespace"} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help lacks %s", flag)
		}
	}
	_, stderr, code := run(t, "--no-such-flag")
	if code != 1 || !strings.Contains(stderr, "no-such-flag") {
		t.Errorf("unknown flag: exit %d, stderr %q", code, stderr)
	}
}
