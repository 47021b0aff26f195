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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDoctor sets up a store through the binary, checks that doctor
// passes it (exit 0), breaks it in several ways (a directory others can
// write, a FIFO, a leftover temp file, a corrupt journal line, a status
// edited by hand against its history, a receipt key others can read),
// and checks that doctor names each problem with its fix, exits 1, and
// leaves the store as it was; a missing store exits 1 and is not created.
func TestDoctor(t *testing.T) {
	root := t.TempDir()
	dir, home := filepath.Join(root, "store"), filepath.Join(root, "home")
	tether := func(args ...string) (string, string, int) {
		cmd := exec.Command(tetherBin, append([]string{"--store", dir}, args...)...)
		cmd.Env = append(os.Environ(), "TETHER_HOME="+home)
		return runCommand(t, cmd)
	}
	for _, args := range [][]string{
		{"apply", "-f", "../../config/samples/agents_v1alpha1_hook.yaml"},
		{"step", "begin", "hook-sample"},
	} {
		if _, stderr, code := tether(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	keys := filepath.Join(home, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(keys, "master.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := tether("doctor")
	if code != 0 || stdout != "no problems found in the store at "+dir+"\n" || stderr != "" {
		t.Fatalf("healthy store: exit %d, stdout %q, stderr %q; want exit 0 and no problems", code, stdout, stderr)
	}
	if stdout, _, code := tether("doctor", "-o", "json"); code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Fatalf("healthy store, -o json: exit %d, %q; want []", code, stdout)
	}

	hooks := filepath.Join(dir, "hooks")
	ns := filepath.Join(hooks, "default")
	file := filepath.Join(ns, "hook-sample.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "\n  state: step_running\n", "\n  state: completed\n", 1)
	if edited == string(data) {
		t.Fatalf("no state to edit in %s", data)
	}
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(file, edited)
	temp := filepath.Join(ns, ".tmp-hook-sample.yaml-999999999-abc")
	write(temp, "old")
	fifo := filepath.Join(ns, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "journal")
	f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"torn\n"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if err := os.Chmod(hooks, 0o757); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code = tether("doctor")
	if code != 1 {
		t.Fatalf("broken store: exit %d, want 1; stdout %s stderr %s", code, stdout, stderr)
	}
	want := []string{
		"permissions " + hooks + ": has mode 0757, which lets group or others write it; refusing to serve it, as a Worker in the store is a command tether runs; fix: chmod 700 " + hooks,
		"temp-files " + temp + ": is a temp file left by a writer that was killed; fix: rm " + temp,
		"entries " + fifo + ": is a FIFO, not a regular file; fix: remove it: rm " + fifo,
		"journal " + journal + ": the line at byte ",
		"receipt-key " + key + ": master key " + key + " has mode 0644, which lets group or others access it; refusing to use it (run: chmod 0600 " + key + "); fix: chmod 700 " + keys + " && chmod 600 " + key,
		"history hook/default/hook-sample: the status disagrees with the replay of status.history: status.state is completed; history says step_running; fix: ",
		"receipts hook/default/hook-sample: the receipts do not support the status: step \"vet\" (status.steps[0]): ",
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("broken store: %d lines, want %d:\n%s", len(lines), len(want), stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || !strings.Contains(lines[i], "; fix: ") {
			t.Errorf("line %d:\n %s\nwant it to start with\n %s", i+1, lines[i], w)
		}
	}
	if wantErr := "error: 7 problems found in the store at " + dir + "\n"; stderr != wantErr {
		t.Errorf("stderr %q, want %q", stderr, wantErr)
	}
	// Nothing was repaired: the temp file is still there, the edit not
	// adopted, the directory still open to others.
	if got, err := os.ReadFile(file); err != nil || string(got) != edited {
		t.Errorf("%s changed: %v", file, err)
	}
	if _, err := os.Lstat(temp); err != nil {
		t.Errorf("the temp file is gone: %v", err)
	}
	if fi, err := os.Stat(hooks); err != nil || fi.Mode().Perm() != 0o757 {
		t.Errorf("%s: %v %v, want mode 0757 still", hooks, fi.Mode(), err)
	}

	stdout, _, code = tether("doctor", "-o", "json")
	var findings []struct{ Check, Severity, Path, Object, Reason, Fix string }
	if err := json.Unmarshal([]byte(stdout), &findings); code != 1 || err != nil || len(findings) != len(want) {
		t.Fatalf("-o json: exit %d, %v, %d findings:\n%s", code, err, len(findings), stdout)
	}
	if f := findings[5]; f.Check != "history" || f.Severity != "error" || f.Object != "hook/default/hook-sample" || f.Fix == "" {
		t.Errorf("-o json: finding %+v, want the history of hook-sample", f)
	}

	typo := filepath.Join(root, "typo")
	_, stderr, code = run(t, "--store", typo, "doctor")
	if code != 1 || !strings.Contains(stderr, "error: there is no store at "+typo+" (create one with tether init, or name it with --store)") {
		t.Fatalf("missing store: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Lstat(typo); !os.IsNotExist(err) {
		t.Fatalf("%s was created: %v", typo, err)
	}
}
