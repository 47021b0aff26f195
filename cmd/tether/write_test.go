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
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// taskFile is a user-authored task file; its comments must survive apply.
const taskFile = `# Tasks for the login fix. This comment must survive.
apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: fix-login   # the main task
  labels:
    team: web
spec:
  goal: fix the login form
  steps:
  - name: reproduce
  - name: fix
---
# a second task
apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: write-docs
spec:
  goal: document the login form
  steps:
  - name: write
`

// tetherCall is one invocation of the built binary.
type tetherCall struct {
	args  []string
	env   []string
	stdin string
}

func (c tetherCall) run(t *testing.T) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(tetherBin, c.args...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdin = strings.NewReader(c.stdin)
	return runCommand(t, cmd)
}

// backendUnderTest is how the scenario reaches one backend: the flags that
// select it, and a client to check and change objects behind the CLI's back.
type backendUnderTest struct {
	flags  []string
	client client.Client
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeScript(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\nset -e\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func getHook(t *testing.T, c client.Client, name string) (*agentsv1alpha1.Hook, error) {
	t.Helper()
	h := &agentsv1alpha1.Hook{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, h)
	return h, err
}

func mustHook(t *testing.T, c client.Client, name string) *agentsv1alpha1.Hook {
	t.Helper()
	h, err := getHook(t, c, name)
	if err != nil {
		t.Fatalf("hook %s: %v", name, err)
	}
	return h
}

func expectOutput(t *testing.T, what, got string, code, wantCode int, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d; output:\n%s", what, code, wantCode, got)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: output lacks %q:\n%s", what, w, got)
		}
	}
}

// writeScenario drives apply, edit and delete through the binary as a user
// would, error cases included, on one backend.
func writeScenario(t *testing.T, b backendUnderTest) {
	ctx := context.Background()
	dir := t.TempDir()
	call := func(args ...string) tetherCall {
		return tetherCall{args: append(append([]string{}, b.flags...), args...)}
	}
	task := writeFile(t, filepath.Join(dir, "task.yaml"), taskFile)

	// apply creates, then is idempotent; the user's file is never touched.
	out, errOut, code := call("apply", "-f", task).run(t)
	expectOutput(t, "first apply", out+errOut, code, 0, "hook.agents.tether.dev/fix-login created\n", "hook.agents.tether.dev/write-docs created\n")
	out, errOut, code = call("apply", "-f", task).run(t)
	expectOutput(t, "second apply", out+errOut, code, 0, "hook.agents.tether.dev/fix-login unchanged\n", "hook.agents.tether.dev/write-docs unchanged\n")
	if got, _ := os.ReadFile(task); string(got) != taskFile {
		t.Errorf("apply changed the user's file:\n%s", got)
	}
	out, errOut, code = call("get", "hook", "fix-login", "-o", "yaml").run(t)
	expectOutput(t, "get -o yaml after apply", out+errOut, code, 0, "goal: fix the login form\n", "team: web\n", "kubectl.kubernetes.io/last-applied-configuration: |\n", "maxAttempts: 3\n")

	// Another writer's field survives a re-apply that changes the goal.
	h := mustHook(t, b.client, "fix-login")
	h.Spec.Assignee = "worker-1"
	if err := b.client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	changed := writeFile(t, filepath.Join(dir, "changed.yaml"), strings.Replace(taskFile, "fix the login form", "fix the login form for good", 1))
	out, errOut, code = call("apply", "-f", changed).run(t)
	expectOutput(t, "apply of a changed goal", out+errOut, code, 0, "hook.agents.tether.dev/fix-login configured\n", "hook.agents.tether.dev/write-docs unchanged\n")
	h = mustHook(t, b.client, "fix-login")
	if h.Spec.Goal != "fix the login form for good" || h.Spec.Assignee != "worker-1" || h.Spec.MaxAttempts != 3 {
		t.Errorf("after re-apply: goal %q assignee %q maxAttempts %d; want the new goal, the other writer's assignee and the default", h.Spec.Goal, h.Spec.Assignee, h.Spec.MaxAttempts)
	}

	// Dry runs store nothing.
	fresh := writeFile(t, filepath.Join(dir, "fresh.yaml"), strings.ReplaceAll(strings.Split(taskFile, "---")[1], "write-docs", "fresh"))
	for _, mode := range []string{"client", "server"} {
		out, errOut, code = call("apply", "-f", fresh, "--dry-run="+mode).run(t)
		suffix := map[string]string{"client": " (dry run)", "server": " (server dry run)"}[mode]
		expectOutput(t, "apply --dry-run="+mode, out+errOut, code, 0, "hook.agents.tether.dev/fresh created"+suffix+"\n")
		if _, err := getHook(t, b.client, "fresh"); !apierrors.IsNotFound(err) {
			t.Errorf("apply --dry-run=%s stored the object: %v", mode, err)
		}
	}

	// Invalid input names the file, the line, the document and the field,
	// and a file with one bad document applies nothing.
	badTwo := strings.Replace(taskFile, "name: write-docs", "name: third", 1)
	for _, tt := range []struct {
		name, file string
		want       []string
	}{
		{"schema violation in document 2", strings.Replace(badTwo, "  goal: document", "  maxAttempts: 0\n  goal: document", 1),
			[]string{"(document 2)", "spec.maxAttempts", "nothing from"}},
		{"unknown field in document 2", strings.Replace(badTwo, "  goal: document", "  golas: x\n  goal: document", 1),
			[]string{":20 (document 2)", `spec.golas`, "unknown field", "nothing from"}},
	} {
		path := writeFile(t, filepath.Join(dir, "bad.yaml"), strings.Replace(tt.file, "fix-login", "first-of-bad", 1))
		out, errOut, code = call("apply", "-f", path).run(t)
		expectOutput(t, tt.name, errOut, code, 1, append(tt.want, path)...)
		for _, n := range []string{"first-of-bad", "third"} {
			if _, err := getHook(t, b.client, n); !apierrors.IsNotFound(err) {
				t.Errorf("%s: %s was applied from a file with a bad document (%v); stdout %q", tt.name, n, err, out)
			}
		}
	}

	// edit: an invalid edit reopens the editor with the error on top, the
	// fixed edit is saved.
	seen := filepath.Join(dir, "seen")
	editor := writeScript(t, filepath.Join(dir, "editor.sh"), `
n=$(cat "$STATE" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$STATE"
cp "$1" "$SEEN.$n"
case $n in
1) sed -i 's/maxAttempts: 3/maxAttempts: 0/' "$1" ;;
*) sed -i 's/maxAttempts: 0/maxAttempts: 7/' "$1" ;;
esac
`)
	edit := call("edit", "hook", "fix-login")
	edit.env = []string{"KUBE_EDITOR=", "EDITOR=" + editor, "STATE=" + filepath.Join(dir, "state"), "SEEN=" + seen}
	out, errOut, code = edit.run(t)
	expectOutput(t, "edit", out+errOut, code, 0, "hook.agents.tether.dev/fix-login edited\n")
	if reopened, _ := os.ReadFile(seen + ".2"); !strings.Contains(string(reopened), "# * ") || !strings.Contains(string(reopened), "spec.maxAttempts") || !strings.Contains(string(reopened), "maxAttempts: 0") {
		t.Errorf("the reopened editor does not show the error and the user's invalid edit on top:\n%s", reopened)
	}
	if h := mustHook(t, b.client, "fix-login"); h.Spec.MaxAttempts != 7 || h.Spec.Assignee != "worker-1" {
		t.Errorf("after edit: maxAttempts %d assignee %q", h.Spec.MaxAttempts, h.Spec.Assignee)
	}

	// An editor that changes nothing cancels.
	edit = call("edit", "hk/fix-login")
	edit.env = []string{"KUBE_EDITOR=true"}
	out, errOut, code = edit.run(t)
	expectOutput(t, "edit without changes", out+errOut, code, 0, "Edit cancelled, no changes made.")

	// A conflicting edit: the object changes while the editor is open.
	rvBefore := mustHook(t, b.client, "fix-login").ResourceVersion
	conflict := writeScript(t, filepath.Join(dir, "conflict.sh"), `
"$TETHER" $FLAGS apply -f "$CHANGED" >/dev/null
sed -i 's/maxAttempts: 7/maxAttempts: 9/' "$1"
`)
	edit = call("edit", "hook", "fix-login")
	changedAgain := writeFile(t, filepath.Join(dir, "changed-again.yaml"), strings.Replace(taskFile, "fix the login form", "changed meanwhile", 1))
	edit.env = []string{"KUBE_EDITOR=" + conflict, "TETHER=" + tetherBin, "FLAGS=" + strings.Join(b.flags, " "), "CHANGED=" + changedAgain}
	out, errOut, code = edit.run(t)
	expectOutput(t, "conflicting edit", out+errOut, code, 2, "was changed after it was opened for editing", "your edits are in ")
	if h := mustHook(t, b.client, "fix-login"); h.Spec.MaxAttempts != 7 || h.Spec.Goal != "changed meanwhile" || h.ResourceVersion == rvBefore {
		t.Errorf("after a conflicting edit: maxAttempts %d goal %q; want the other writer's change only", h.Spec.MaxAttempts, h.Spec.Goal)
	}
	if i := strings.Index(errOut, "your edits are in "); i >= 0 {
		kept := strings.Fields(strings.TrimSuffix(errOut[i+len("your edits are in "):], ";"))[0]
		kept = strings.TrimSuffix(kept, ";")
		if data, err := os.ReadFile(kept); err != nil || !strings.Contains(string(data), "maxAttempts: 9") {
			t.Errorf("the kept copy %s does not hold the edit: %v", kept, err)
		}
		_ = os.Remove(kept)
	}

	// Unknown types and names.
	_, errOut, code = call("edit", "hook", "nope").run(t)
	expectOutput(t, "edit of a missing hook", errOut, code, 2, `"nope" not found`)
	_, errOut, code = call("delete", "widgets", "x").run(t)
	expectOutput(t, "delete of an unknown type", errOut, code, 1, `doesn't have a resource type "widgets"`)
	_, errOut, code = call("delete", "hook", "nope").run(t)
	expectOutput(t, "delete of a missing hook", errOut, code, 2, `hooks.agents.tether.dev "nope" not found`)
	_, errOut, code = call("delete", "hook", "nope", "--ignore-not-found").run(t)
	expectOutput(t, "delete --ignore-not-found", errOut, code, 0)

	// delete honours finalizers and, with --wait, returns once they are gone.
	h = mustHook(t, b.client, "fix-login")
	h.Finalizers = []string{"example.com/hold"}
	if err := b.client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tetherBin, append(append([]string{}, b.flags...), "delete", "hook", "fix-login")...)
	output := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(output.String(), `hook.agents.tether.dev "fix-login" deleted`) {
		if time.Now().After(deadline) {
			t.Fatalf("delete did not report the deletion: %s", output.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-waited:
		t.Fatalf("delete --wait returned (%v) while a finalizer held the object", err)
	case <-time.After(300 * time.Millisecond):
	}
	h = mustHook(t, b.client, "fix-login")
	if h.DeletionTimestamp == nil {
		t.Fatal("the hook is not marked for deletion")
	}
	h.Finalizers = nil
	if err := b.client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("delete --wait: %v\n%s", err, output.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("delete --wait did not return after the finalizer was removed")
	}

	// Selection by label; a namespace mismatch with -n is refused.
	out, errOut, code = call("apply", "-f", task).run(t)
	expectOutput(t, "re-apply", out+errOut, code, 0, "hook.agents.tether.dev/fix-login created\n")
	out, errOut, code = call("delete", "hooks", "-l", "team=web").run(t)
	expectOutput(t, "delete -l", out+errOut, code, 0, `hook.agents.tether.dev "fix-login" deleted`)
	if strings.Contains(out, "write-docs") {
		t.Errorf("delete -l team=web deleted write-docs:\n%s", out)
	}
	_, errOut, code = call("delete", "hooks").run(t)
	expectOutput(t, "delete without names", errOut, code, 1, "no name was specified")
	namespaced := writeFile(t, filepath.Join(dir, "namespaced.yaml"), strings.Replace(strings.Split(taskFile, "---")[1], "name: write-docs", "name: ns-doc\n  namespace: elsewhere", 1))
	_, errOut, code = call("apply", "-f", namespaced, "-n", "default").run(t)
	expectOutput(t, "apply with a mismatched -n", errOut, code, 1, `namespace from the provided object "elsewhere" does not match the namespace "default"`)

	out, errOut, code = call("delete", "-f", task, "--ignore-not-found").run(t)
	expectOutput(t, "delete -f", out+errOut, code, 0, `hook.agents.tether.dev "write-docs" deleted`)
	if _, err := getHook(t, b.client, "write-docs"); !apierrors.IsNotFound(err) {
		t.Errorf("write-docs after delete -f: %v", err)
	}
	if got, _ := os.ReadFile(task); string(got) != taskFile {
		t.Errorf("the user's file changed during the scenario:\n%s", got)
	}
	applyFollowsKubectl(t, b, call, dir)
}

// applyFollowsKubectl checks the inputs where kubectl's apply and edit
// refuse what tether once accepted (issue 14): no objects, generateName, a
// stale resourceVersion, JSON that only YAML accepts, and a changed kind.
func applyFollowsKubectl(t *testing.T, b backendUnderTest, call func(...string) tetherCall, dir string) {
	hook := strings.Split(taskFile, "---")[1]
	for _, tt := range []struct{ name, file, content string }{
		{"empty file", "empty.yaml", ""},
		{"only comments", "comments.yaml", "# nothing yet\n---\n# nor here\n---\n"},
	} {
		path := writeFile(t, filepath.Join(dir, tt.file), tt.content)
		out, errOut, code := call("apply", "-f", path).run(t)
		expectOutput(t, "apply of "+tt.name, out+errOut, code, 1, "error: no objects passed to apply")
	}

	generated := writeFile(t, filepath.Join(dir, "generated.yaml"), strings.Replace(hook, "name: write-docs", "generateName: gen-", 1))
	out, errOut, code := call("apply", "-f", generated).run(t)
	expectOutput(t, "apply with generateName", out+errOut, code, 1, generated+":6 (document 1): metadata.generateName: from gen-: cannot use generate name with apply")
	var hooks agentsv1alpha1.HookList
	if err := b.client.List(context.Background(), &hooks); err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks.Items {
		if strings.HasPrefix(h.Name, "gen-") {
			t.Errorf("apply with generateName created %s", h.Name)
		}
	}

	stale := writeFile(t, filepath.Join(dir, "stale.yaml"), strings.Replace(hook, "name: write-docs", "name: versioned", 1))
	out, errOut, code = call("apply", "-f", stale).run(t)
	expectOutput(t, "apply of versioned", out+errOut, code, 0, "hook.agents.tether.dev/versioned created")
	old, _, _ := call("get", "hook", "versioned", "-o", "yaml").run(t)
	newer := writeFile(t, filepath.Join(dir, "newer.yaml"), strings.Replace(old, "goal: document the login form", "goal: the newer goal", 1))
	out, errOut, code = call("apply", "-f", newer).run(t)
	expectOutput(t, "apply of the current resourceVersion", out+errOut, code, 0, "hook.agents.tether.dev/versioned configured")
	older := writeFile(t, filepath.Join(dir, "older.yaml"), strings.Replace(old, "goal: document the login form", "goal: a stale goal", 1))
	out, errOut, code = call("apply", "-f", older).run(t)
	expectOutput(t, "apply of a stale resourceVersion", out+errOut, code, 2, "the object has been modified")
	if h := mustHook(t, b.client, "versioned"); h.Spec.Goal != "the newer goal" {
		t.Errorf("a stale resourceVersion overwrote the newer object: goal %q", h.Spec.Goal)
	}

	const jsonHook = `{
  "apiVersion": "agents.tether.dev/v1alpha1",
  "kind": "Hook",
  "metadata": {"name": "from-json"},
  "spec": {"goal": "g", "steps": [{"name": "one"}]}
}
`
	trailing := writeFile(t, filepath.Join(dir, "trailing.json"), strings.Replace(jsonHook, `"one"}]`, `"one"},]`, 1))
	out, errOut, code = call("apply", "-f", trailing).run(t)
	expectOutput(t, "apply of JSON with a trailing comma", out+errOut, code, 1, trailing+":5 (document 1): invalid JSON")
	if _, err := getHook(t, b.client, "from-json"); !apierrors.IsNotFound(err) {
		t.Errorf("JSON with a trailing comma was applied: %v", err)
	}
	strict := writeFile(t, filepath.Join(dir, "strict.json"), jsonHook)
	out, errOut, code = call("apply", "-f", strict).run(t)
	expectOutput(t, "apply of strict JSON", out+errOut, code, 0, "hook.agents.tether.dev/from-json created")

	seen := filepath.Join(dir, "kind-seen")
	editor := writeScript(t, filepath.Join(dir, "kind-editor.sh"), `
n=$(cat "$STATE" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$STATE"
cp "$1" "$SEEN.$n"
case $n in
1) sed -i 's/^kind: Hook/kind: Worker/' "$1" ;;
*) sed -i 's/^kind: Worker/kind: Hook/; s/goal: g$/goal: edited/' "$1" ;;
esac
`)
	edit := call("edit", "hook", "from-json")
	edit.env = []string{"KUBE_EDITOR=" + editor, "STATE=" + filepath.Join(dir, "kind-state"), "SEEN=" + seen}
	out, errOut, code = edit.run(t)
	expectOutput(t, "edit changing the kind", out+errOut, code, 0, "hook.agents.tether.dev/from-json edited")
	reopened, _ := os.ReadFile(seen + ".2")
	if !strings.Contains(string(reopened), `kind: the kind of an object cannot be changed (was "Hook", now "Worker")`) || strings.Contains(string(reopened), "unknown field") {
		t.Errorf("the reopened editor does not say that the kind cannot change:\n%s", reopened)
	}
	if h := mustHook(t, b.client, "from-json"); h.Spec.Goal != "edited" {
		t.Errorf("after the fixed edit: goal %q", h.Spec.Goal)
	}
}

func TestApplyEditDeleteOnTheLocalStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	flags := []string{"--store", dir}
	// The store directory exists once the CLI has opened it.
	if _, _, code := (tetherCall{args: append(flags, "delete", "hook", "x", "--ignore-not-found")}).run(t); code != 0 {
		t.Fatalf("opening the store: exit %d", code)
	}
	writeScenario(t, backendUnderTest{flags: flags, client: openStore(t, dir).Client()})
}

func TestApplyEditDeleteOnKubeAPIServer(t *testing.T) {
	env := testenv.Start(t)
	writeScenario(t, backendUnderTest{flags: []string{"--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default"}, client: env.Client})
}
