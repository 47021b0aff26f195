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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

var tetherBin string

// buildTether builds the binary into out the way `make build` does: no cgo,
// -trimpath, stripped (-s -w), with the version and commit stamped, and
// with the build tags given (none ship). binary_test.go checks that the
// result without tags is what ships.
func buildTether(out string, tags ...string) error {
	build := exec.Command("go", "build", "-trimpath", "-tags", strings.Join(tags, ","), "-ldflags",
		"-X github.com/tether-dev/tether/internal/version.Version=v9.9.9-test -X github.com/tether-dev/tether/internal/version.Commit=abc123 -s -w",
		"-o", out, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	return build.Run()
}

var (
	failpointOnce sync.Once
	failpointBin  string
	failpointErr  error
)

// failpointBinary is tether built with the test failpoints
// (controllers.FailpointTag), once, for the tests that need one; every
// other test drives tetherBin, the shipped build.
func failpointBinary(t testing.TB) string {
	t.Helper()
	failpointOnce.Do(func() {
		failpointBin = filepath.Join(filepath.Dir(tetherBin), "tether-failpoints")
		failpointErr = buildTether(failpointBin, controllers.FailpointTag)
	})
	if failpointErr != nil {
		t.Fatalf("building tether with the failpoints: %v", failpointErr)
	}
	return failpointBin
}

// TestMain builds the real binary once; the tests drive it as a user would.
func TestMain(m *testing.M) {
	if backend := os.Getenv(cacheFloorEnv); backend != "" {
		if err := runCacheFloor(backend, os.Getenv(cacheFloorTarget), os.Getenv(cacheFloorPprof)); err != nil {
			fmt.Fprintln(os.Stderr, "cache floor:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "tether-e2e-")
	if err != nil {
		panic(err)
	}
	tetherBin = filepath.Join(dir, "tether")
	if err := buildTether(tetherBin); err != nil {
		panic("building tether: " + err.Error())
	}
	// No test reads or writes the user's tether home (keys, configuration):
	// a key there would change what recover and receipts verify print. Tests
	// that need a home of their own still set TETHER_HOME.
	if err := os.Setenv(config.HomeEnv, filepath.Join(dir, "home")); err != nil {
		panic(err)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func run(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCommand(t, exec.Command(tetherBin, args...))
}

// runCommand runs cmd and returns its output and exit code; it fails the
// test only when cmd cannot be run at all.
func runCommand(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
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

func TestRunServesTheStoreUntilSIGTERM(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(tetherBin, "run")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "TETHER_STORE=")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.Stdout = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "serving the local store") {
		if time.Now().After(deadline) {
			t.Fatalf("tether run did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if fi, err := os.Stat(filepath.Join(work, ".tether")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the default store ./.tether was not created 0700: %v", err)
	}

	second := exec.Command(tetherBin, "run", "--store", filepath.Join(work, ".tether"))
	out, err := second.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 || !strings.Contains(string(out), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Fatalf("a second tether run on the same store: %v\n%s\nwant exit 1 naming pid %d", err, out, cmd.Process.Pid)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("tether run exited with %v after SIGTERM:\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("tether run did not stop within 15s of SIGTERM")
	}
}

// syncBuffer is testsupport.SyncBuffer.
type syncBuffer = testsupport.SyncBuffer
