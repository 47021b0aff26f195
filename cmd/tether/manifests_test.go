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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
)

func eventually(t *testing.T, what string, log *syncBuffer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 20s; tether run said:\n%s", what, log.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestRunManifests drives `tether run --manifests DIR`: files added,
// changed, made invalid and removed are applied, kept and pruned, and the
// directory's files are never written.
func TestRunManifests(t *testing.T) {
	work := t.TempDir()
	store, manifests := filepath.Join(work, "store"), filepath.Join(work, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	task := writeFile(t, filepath.Join(manifests, "task.yaml"), taskFile)
	notes := writeFile(t, filepath.Join(manifests, "notes.txt"), "not a manifest")

	cmd := exec.Command(tetherBin, "run", "--store", store, "--manifests", manifests)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	eventually(t, "serving the store", log, func() bool { return strings.Contains(log.String(), "serving the local store") })
	c := openStore(t, store).Client()
	exists := func(name string) bool {
		_, err := getHook(t, c, name)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	eventually(t, "applying task.yaml", log, func() bool { return exists("fix-login") && exists("write-docs") })
	h := mustHook(t, c, "fix-login")
	if h.Labels["team"] != "web" || h.Labels["agents.tether.dev/manifests"] == "" || h.Annotations["agents.tether.dev/manifest-file"] != "task.yaml" {
		t.Errorf("applied hook labels %v annotations %v", h.Labels, h.Annotations)
	}

	// A change to the file is applied, keeping fields other writers own.
	// The running reconcilers write the Hook too: read, change, write, as
	// kubectl edit does, again on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := mustHook(t, c, "fix-login")
		h.Spec.Assignee = "worker-1"
		return c.Update(t.Context(), h)
	}); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(taskFile, "fix the login form", "fix it properly", 1)
	writeFile(t, task, edited)
	eventually(t, "applying the changed goal", log, func() bool {
		h := mustHook(t, c, "fix-login")
		return h.Spec.Goal == "fix it properly" && h.Spec.Assignee == "worker-1"
	})

	// An invalid file is reported with its location and changes nothing.
	invalid := strings.Replace(edited, "  goal: document the login form", "  goal: changed\n  maxAttempts: 0", 1)
	writeFile(t, task, invalid)
	eventually(t, "reporting the invalid file", log, func() bool {
		return strings.Contains(log.String(), "task.yaml:") && strings.Contains(log.String(), "spec.maxAttempts") && strings.Contains(log.String(), "nothing from")
	})
	if h := mustHook(t, c, "write-docs"); h.Spec.Goal != "document the login form" {
		t.Errorf("an invalid file changed write-docs: goal %q", h.Spec.Goal)
	}

	// Removing a document deletes its object; removing the file deletes the rest.
	writeFile(t, task, strings.Split(edited, "---")[0])
	eventually(t, "pruning write-docs", log, func() bool { return !exists("write-docs") && exists("fix-login") })
	final := strings.Split(edited, "---")[0]
	if err := os.Rename(task, filepath.Join(work, "moved.yaml")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pruning fix-login", log, func() bool { return !exists("fix-login") })
	if data, _ := os.ReadFile(filepath.Join(work, "moved.yaml")); string(data) != final {
		t.Errorf("tether run wrote to a user's manifest:\n%s", data)
	}
	if data, _ := os.ReadFile(notes); string(data) != "not a manifest" {
		t.Errorf("tether run wrote to notes.txt")
	}
	entries, _ := os.ReadDir(manifests)
	if len(entries) != 1 {
		t.Errorf("tether run created files in the manifests directory: %v", entries)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tether run: %v\n%s", err, log.String())
	}
}

// TestCommentsInATaskFileSurviveApply checks the user-authored file, with its
// comments, is byte-for-byte unchanged by apply and by run --manifests.
func TestCommentsInATaskFileSurviveApply(t *testing.T) {
	work := t.TempDir()
	store, manifests := filepath.Join(work, "store"), filepath.Join(work, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	task := writeFile(t, filepath.Join(manifests, "task.yaml"), taskFile)
	before, _ := os.Stat(task)
	if _, errOut, code := (tetherCall{args: []string{"--store", store, "apply", "-f", task}}).run(t); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	cmd := exec.Command(tetherBin, "run", "--store", store, "--manifests", manifests)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	c := openStore(t, store).Client()
	eventually(t, "run --manifests adopting the applied hooks", log, func() bool {
		h := mustHook(t, c, "fix-login")
		return h.Labels["agents.tether.dev/manifests"] != ""
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	data, err := os.ReadFile(task)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(task)
	if string(data) != taskFile || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the task file changed (mtime %v -> %v):\n%s", before.ModTime(), after.ModTime(), data)
	}
	if !strings.Contains(string(data), "# the main task") {
		t.Error("the comment is gone")
	}
}

// TestKubectlPlugin installs the binary as kubectl-tether on PATH and drives
// it through the machine's kubectl.
func TestKubectlPlugin(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	bin := t.TempDir()
	data, err := os.ReadFile(tetherBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "kubectl-tether"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	task := writeFile(t, filepath.Join(work, "task.yaml"), taskFile)
	kubectlTether := func(args ...string) (string, int) {
		cmd := exec.Command(kubectl, append([]string{"tether"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TETHER_STORE="+filepath.Join(work, "store"))
		out, err := cmd.CombinedOutput()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := kubectlTether("--help")
	expectOutput(t, "kubectl tether --help", out, code, 0, "kubectl tether [command]")
	out, code = kubectlTether("apply", "--help")
	expectOutput(t, "kubectl tether apply --help", out, code, 0, "kubectl tether apply -f FILENAME")
	out, code = kubectlTether("apply", "-f", task)
	expectOutput(t, "kubectl tether apply", out, code, 0, "hook.agents.tether.dev/fix-login created")
	out, code = kubectlTether("get", "hooks")
	expectOutput(t, "kubectl tether get hooks", out, code, 0, "NAME", "fix-login", "write-docs")
	out, code = kubectlTether("delete", "hook", "nope")
	expectOutput(t, "kubectl tether delete of a missing hook", out, code, 2, `"nope" not found`)
	out, code = kubectlTether("delete", "-f", task)
	expectOutput(t, "kubectl tether delete -f", out, code, 0, `hook.agents.tether.dev "fix-login" deleted`)
}
