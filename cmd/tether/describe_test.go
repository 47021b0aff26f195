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
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tetherv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// seedRelated adds a Checkpoint of running-example and an Event about it.
func seedRelated(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	hook := &tetherv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "running-example"}, hook); err != nil {
		t.Fatal(err)
	}
	cp := &tetherv1alpha1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "running-example-1"},
		Spec: tetherv1alpha1.CheckpointSpec{
			HookName: "running-example", Trigger: tetherv1alpha1.TriggerStepComplete, Step: "api",
			Description: "api step passed", Git: &tetherv1alpha1.GitState{Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567"},
		},
	}
	if err := c.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "running-example.1"},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: tetherv1alpha1.GroupVersion.String(), Kind: "Hook", Namespace: "default",
			Name: "running-example", UID: hook.UID,
		},
		Type: corev1.EventTypeWarning, Reason: "StaleHeartbeat", Message: "no heartbeat for 5m0s",
		Source: corev1.EventSource{Component: "tether-controller"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if err := c.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
}

func readVerbs(t *testing.T, base []string) {
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"describe hook", []string{"describe", "hook", "running-example"}, 0, []string{
			"Name:", "running-example\n", "Goal:", "Add pagination to the list endpoint.", "State:", "step_running",
			"Current Step:", "implement (2/3, attempt 1)", "Files Touched:", "internal/list/cursor.go, internal/list/handler.go",
			"Steps:\n", "api ", "Passed", "go build ./...", "Conditions:\n", "Ready", "Progressing",
			"History:\n", "initialize", "Checkpoints:\n", "running-example-1", "step_complete", "0123456789ab ",
			"Events:\n", "Type", "Reason", "Age", "From", "Message", "Warning", "StaleHeartbeat", "tether-controller", "no heartbeat for 5m0s",
		}},
		{"describe TYPE/NAME without events", []string{"describe", "hk/completed-example"}, 0, []string{"State:", "completed", "Events:", "<none>"}},
		{"describe checkpoint", []string{"describe", "cp", "running-example-1"}, 0, []string{"Hook:", "running-example", "Commit:", "0123456789abcdef0123456789abcdef01234567", "Files:", "<none>"}},
		{"describe unknown", []string{"describe", "hook", "nosuch"}, 2, nil},
		{"events", []string{"events"}, 0, []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE", "Warning", "StaleHeartbeat", "Hook/running-example", "no heartbeat for 5m0s"}},
		{"events for", []string{"events", "--for", "hook/running-example"}, 0, []string{"StaleHeartbeat"}},
		{"get events", []string{"get", "events"}, 0, []string{"LAST SEEN", "hook/running-example", "StaleHeartbeat"}},
		{"explain", []string{"explain", "hk.spec.steps.validate"}, 0, []string{"KIND:       Hook", "FIELD: validate <[]Object>", "command\t<[]string> -required-", "timeout\t<string>"}},
		{"explain unknown field", []string{"explain", "hk.spec.nope"}, 1, nil},
		{"completion of types", []string{"__complete", "get", "h"}, 0, []string{"hooks\n", ":4\n"}},
		{"completion of names", []string{"__complete", "describe", "hooks", "run"}, 0, []string{"running-example\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := run(t, append(append([]string{}, base...), tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	out, _, _ := run(t, append(append([]string{}, base...), "events", "--for", "hook/completed-example")...)
	if out != "" {
		t.Errorf("events --for hook/completed-example shows other objects' Events:\n%s", out)
	}
}

// watchLines starts `tether get hooks -w` and returns its stdout lines.
func watchLines(t *testing.T, args ...string) (<-chan string, func()) {
	t.Helper()
	cmd := exec.Command(tetherBin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	return lines, func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("tether get -w after SIGINT: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("tether get -w did not stop on SIGINT")
		}
	}
}

func nextLine(t *testing.T, lines <-chan string, want ...string) {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("tether get -w ended before printing %q", want)
		}
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Fatalf("line %q, want one containing %q", l, want)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no line containing %q within 20s", want)
	}
}

// watchChanges checks that get -w prints a row for each change another
// process makes: a create, a status update and a delete; and that a watch of
// one Hook by name, or of Hooks by label, labels a change MODIFIED.
func watchChanges(t *testing.T, c client.Client, base []string) {
	lines, stop := watchLines(t, append(append([]string{}, base...), "get", "hooks", "-w", "--output-watch-events")...)
	defer stop()
	nextLine(t, lines, "EVENT")
	for range fixtures {
		nextLine(t, lines, "ADDED")
	}
	ctx := context.Background()
	seed(t, c, "stale.yaml")
	nextLine(t, lines, "ADDED")
	nextLine(t, lines, "MODIFIED")
	hook := &tetherv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "init-example"}, hook); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, hook); err != nil {
		t.Fatal(err)
	}
	nextLine(t, lines, "DELETED", "init-example")

	for _, args := range [][]string{
		{"get", "hook", "running-example", "-w", "--output-watch-events"},
		{"get", "hooks", "-l", "nosuch!=1", "-w", "--output-watch-events"},
	} {
		selected, stopSelected := watchLines(t, append(append([]string{}, base...), args...)...)
		nextLine(t, selected, "EVENT")
		initial := 1
		if args[1] == "hooks" {
			// stale.yaml's Hook took the deleted init-example's place.
			initial = len(fixtures)
		}
		for range initial {
			nextLine(t, selected, "ADDED")
		}
		for _, verb := range []string{"pause", "unpause"} {
			if _, stderr, code := run(t, append(append([]string{}, base...), verb, "running-example")...); code != 0 {
				t.Fatalf("tether %s: %s", verb, stderr)
			}
			nextLine(t, selected, "MODIFIED", "running-example")
		}
		stopSelected()
	}
}

func TestReadVerbsOnTheLocalStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	store := openStore(t, dir)
	seed(t, store.Client(), fixtures...)
	seedRelated(t, store.Client())
	base := []string{"--store", dir}
	readVerbs(t, base)
	watchChanges(t, store.Client(), base)
}

func TestReadVerbsOnACluster(t *testing.T) {
	env := testenv.Start(t)
	seed(t, env.Client, fixtures...)
	seedRelated(t, env.Client)
	base := []string{"--cluster", "--kubeconfig", env.Kubeconfig}
	readVerbs(t, base)
	watchChanges(t, env.Client, base)
}
