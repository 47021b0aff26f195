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
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestConsoleCommandServesAStore runs tether console on a store without
// tether run: it serves the overview and a Hook's page, answers only GET
// and HEAD, and stops on SIGTERM.
func TestConsoleCommandServesAStore(t *testing.T) {
	e := newAgentEnv(t)
	e.createHook("served", 0, 0, v1.Step{Name: "build"})
	cmd := e.command("console", "--bind-address", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("tether console printed no address: %v", err)
	}
	m := regexp.MustCompile(`at (http://127\.0\.0\.1:[0-9]+/)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("tether console printed %q, without its URL", line)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		want         string
	}{
		{http.MethodGet, "", http.StatusOK, `data-hook="default/served"`},
		{http.MethodGet, "hooks/default/served", http.StatusOK, "test the agent verbs"},
		{http.MethodHead, "", http.StatusOK, ""},
		{http.MethodPost, "", http.StatusMethodNotAllowed, "read-only"},
		{http.MethodDelete, "hooks/default/served", http.StatusMethodNotAllowed, "read-only"},
	} {
		req, err := http.NewRequest(tc.method, m[1]+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s /%s: %d, want %d with %q:\n%s", tc.method, tc.path, resp.StatusCode, tc.status, tc.want, body)
		}
	}
	if e.hook("served").Status.State != "" {
		t.Errorf("the console changed the Hook: state %q", e.hook("served").Status.State)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("tether console exited with %v on SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("tether console did not stop on SIGTERM")
	}
}

// TestConsoleRefusesRemoteAddressesUnlessAllowed checks that neither
// tether console nor tether run serves the console off loopback without
// the flag that says so, and that the flag allows it.
func TestConsoleRefusesRemoteAddressesUnlessAllowed(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	env := append(os.Environ(), "TETHER_HOME="+filepath.Join(dir, "home"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"console", "--bind-address", "0.0.0.0:0"}, "--allow-remote"},
		{[]string{"console", "--bind-address", ":0"}, "--allow-remote"},
		{[]string{"run", "--metrics-bind-address", "0.0.0.0:0"}, "--console-allow-remote"},
		{[]string{"run", "--console-bind-address", "0.0.0.0:0"}, "--console-allow-remote"},
	} {
		cmd := exec.Command(tetherBin, append(tc.args, "--store", store)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "off the loopback interface") {
			t.Errorf("tether %s: %v, want a refusal naming %s:\n%s", strings.Join(tc.args, " "), err, tc.want, out)
		}
	}
	cmd := exec.Command(tetherBin, "console", "--bind-address", "0.0.0.0:0", "--allow-remote", "--store", store)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "serving the console") {
		t.Errorf("tether console --allow-remote did not serve: %v %q", err, line)
	}
}
