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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// errorLog collects a store's error log lines.
type errorLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *errorLog) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

// count returns how many error lines mention s.
func (l *errorLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, `"error"`) && strings.Contains(line, s) {
			n++
		}
	}
	return n
}

const badHookYAML = `apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata: {name: bad, namespace: default}
spec:
  goal: g
  staleAfter: %s
  steps: [{name: one, validate: [{command: ["true"], timeout: %s}]}]
`

const badWorkerYAML = `apiVersion: agents.tether.dev/v1alpha1
kind: Worker
metadata: {name: bad, namespace: default}
spec:
  command: [sleep, "1"]
  heartbeatTimeout: %s
  restart: {auto: true, window: %s}
`

// TestPoisonPillsAreQuarantined places one entry the store cannot read
// beside a good object and checks that lists, watches and writes of every
// other object keep working, that the entry is skipped and reported once
// with its path, and that Inspect names it.
func TestPoisonPillsAreQuarantined(t *testing.T) {
	root := os.Geteuid() == 0
	tests := []struct {
		name   string
		plural string
		// place puts the bad entry at path.
		place func(t *testing.T, path string)
		// reason is a part of the reported reason.
		reason string
		// needsRoot marks cases that only root can set up.
		needsRoot bool
	}{
		{name: "staleAfter beyond Go's durations", plural: "hooks", reason: "spec.staleAfter",
			place: writeFile(fmt.Sprintf(badHookYAML, "2562048h", "1m"))},
		{name: "a 20-digit staleAfter", plural: "hooks", reason: "spec.staleAfter",
			place: writeFile(fmt.Sprintf(badHookYAML, "99999999999999999999h", "1m"))},
		{name: "validate timeout beyond Go's durations", plural: "hooks", reason: "spec.steps[0].validate[0].timeout",
			place: writeFile(fmt.Sprintf(badHookYAML, "5m", "2562048h"))},
		{name: "Worker restart window beyond Go's durations", plural: "workers", reason: "spec.restart.window",
			place: writeFile(fmt.Sprintf(badWorkerYAML, "2m", "99999999999999999999h"))},
		{name: "Worker heartbeatTimeout beyond Go's durations", plural: "workers", reason: "spec.heartbeatTimeout",
			place: writeFile(fmt.Sprintf(badWorkerYAML, "2562048h", "10m"))},
		{name: "unparseable YAML", plural: "hooks", reason: "yaml",
			place: writeFile("apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata: {name: bad\n")},
		{name: "a hand edit beyond the object size limit", plural: "hooks", reason: "the limit is",
			place: writeFile(strings.Replace(fmt.Sprintf(badHookYAML, "5m", "1m"), `command: ["true"]`, `command: ["`+strings.Repeat("x", 2<<20)+`"]`, 1))},
		{name: "a file beyond what an object can take", plural: "hooks", reason: "beyond what an object",
			place: writeFile(fmt.Sprintf(badHookYAML, "5m", "1m") + "# " + strings.Repeat("x", 4<<20) + "\n")},
		{name: "a symbolic link", plural: "hooks", reason: "symbolic link",
			place: func(t *testing.T, path string) {
				outside := filepath.Join(t.TempDir(), "outside.yaml")
				writeFile(fmt.Sprintf(badHookYAML, "5m", "1m"))(t, outside)
				if err := os.Symlink(outside, path); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a FIFO", plural: "hooks", reason: "FIFO",
			place: func(t *testing.T, path string) {
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a device", plural: "hooks", reason: "device", needsRoot: true,
			place: func(t *testing.T, path string) {
				if err := syscall.Mknod(path, syscall.S_IFCHR|0o600, 1<<8|3); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a file owned by another user", plural: "hooks", reason: "owned by uid 65534", needsRoot: true,
			place: func(t *testing.T, path string) {
				writeFile(fmt.Sprintf(badHookYAML, "5m", "1m"))(t, path)
				if err := os.Chown(path, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needsRoot && !root {
				t.Skip("needs root")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dir := t.TempDir()
			logs := &errorLog{}
			s := openStore(t, dir, func(o *filestore.Options) { o.Log = logs.logger() })
			c := s.Client()
			if err := c.Create(ctx, hook("good")); err != nil {
				t.Fatal(err)
			}
			good := &agentsv1alpha1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "good"}, Spec: agentsv1alpha1.WorkerSpec{Command: []string{"true"}}}
			if err := c.Create(ctx, good); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tt.plural, "default", "bad.yaml")
			tt.place(t, path)

			// Lists, twice: the entry is reported once.
			for range 2 {
				hooks, workers := &agentsv1alpha1.HookList{}, &agentsv1alpha1.WorkerList{}
				if err := c.List(ctx, hooks); err != nil || len(hooks.Items) != 1 || hooks.Items[0].Name != "good" {
					t.Fatalf("list hooks: %v %v, want only good", err, hooks.Items)
				}
				if err := c.List(ctx, workers); err != nil || len(workers.Items) != 1 || workers.Items[0].Name != "good" {
					t.Fatalf("list workers: %v %v, want only good", err, workers.Items)
				}
			}
			if n := logs.count(path); n != 1 {
				t.Errorf("%d error log lines name %s, want 1: %v", n, path, logs.lines)
			}
			// A watch starts, sends the good objects and then a new one.
			w, err := c.Watch(ctx, &agentsv1alpha1.HookList{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*agentsv1alpha1.Hook).Name != "good" {
				t.Fatalf("watch: %v %v, want good ADDED", ev.Type, ev.Object)
			}
			if err := c.Create(ctx, hook("new")); err != nil {
				t.Fatal(err)
			}
			if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*agentsv1alpha1.Hook).Name != "new" {
				t.Fatalf("watch: %v %v, want new ADDED", ev.Type, ev.Object)
			}
			problems := inspect(t, dir)
			if len(problems) != 1 || problems[0].Path != path || !strings.Contains(problems[0].Reason, tt.reason) || problems[0].Fix == "" {
				t.Fatalf("Inspect: %+v, want one problem of %s about %q", problems, path, tt.reason)
			}
		})
	}
}

func writeFile(content string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// next returns the watch's next event, failing after 10 s.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended")
		}
		if ev.Type == watch.Error {
			t.Fatalf("watch error: %v", ev.Object)
		}
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no watch event within a minute")
	}
	return watch.Event{}
}

// TestUndecodableEditOfAnExistingObjectKeepsTheLastValidVersion checks
// that a hand edit the Go types cannot hold is refused like any invalid
// edit, and that an unstructured write of one is refused with the field.
func TestUndecodableEditOfAnExistingObjectKeepsTheLastValidVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	h := hook("edited")
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hooks", "default", "edited.yaml")
	sedInPlace(t, path, "s/^  goal: g$/  goal: g\\n  staleAfter: 99999999999999999999h/")
	got := &agentsv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil || got.ResourceVersion != h.ResourceVersion {
		t.Fatalf("get: %v rv %s, want the last valid version %s", err, got.ResourceVersion, h.ResourceVersion)
	}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"staleAfter":"2562048h"}}`))
	err := c.Patch(ctx, got, patch)
	if err == nil || !strings.Contains(err.Error(), "spec.staleAfter") {
		t.Fatalf("patch to an undecodable duration: %v, want a refusal naming spec.staleAfter", err)
	}
}

// TestCorruptJournalLineIsSkipped corrupts a line in the middle of the
// journal: writes, lists and watches from before and after it keep
// working, the line is reported, and a watch that may have missed it is
// told to list again.
func TestCorruptJournalLineIsSkipped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	logs := &errorLog{}
	s := openStore(t, dir, func(o *filestore.Options) { o.Log = logs.logger() })
	c := s.Client()
	for i := range 3 {
		if err := c.Create(ctx, hook(fmt.Sprintf("h%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	list := &agentsv1alpha1.HookList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	// Corrupt the second line (h1's create) in place.
	journal := filepath.Join(dir, "journal")
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[1] = strings.Repeat("#", len(lines[1])-1) + "\n"
	if err := os.WriteFile(journal, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	// A watch from after the corrupt line resumes and sees new writes.
	after, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer after.Stop()
	if err := c.Create(ctx, hook("h3")); err != nil {
		t.Fatalf("a write after a corrupt journal line: %v", err)
	}
	if ev := next(t, after); ev.Object.(*agentsv1alpha1.Hook).Name != "h3" {
		t.Fatalf("watch from after the corrupt line: %v", ev.Object)
	}
	if err := c.List(ctx, list); err != nil || len(list.Items) != 4 {
		t.Fatalf("list: %v, %d items", err, len(list.Items))
	}
	// A watch resuming from before the corrupt line (h1's create) cannot
	// tell what it missed: it tells the client to list again rather than
	// skip h1 silently.
	fromStart, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fromStart.Stop()
	sawExpired := false
	for ev := range fromStart.ResultChan() {
		if st, ok := ev.Object.(*metav1.Status); ok && ev.Type == watch.Error && st.Code == 410 {
			sawExpired = true
		}
	}
	if !sawExpired {
		t.Error("the watch from before the corrupt line did not get 410 Expired")
	}
	if logs.count(journal) == 0 {
		t.Errorf("the corrupt line was not logged as an error: %v", logs.lines)
	}
	problems := inspect(t, dir)
	if len(problems) != 1 || problems[0].Path != journal || !strings.Contains(problems[0].Reason, "corrupt") {
		t.Fatalf("Inspect: %+v, want the corrupt journal line", problems)
	}
}

// inspect returns the problems filestore.Inspect finds in dir (those of
// InspectAll, which Inspect returns), with tether's scheme and CRDs.
func inspect(t *testing.T, dir string) []filestore.Problem {
	t.Helper()
	return inspectAll(t, dir).Problems
}

// inspectAll runs filestore.InspectAll on dir with tether's scheme and CRDs.
func inspectAll(t *testing.T, dir string) *filestore.Inspection {
	t.Helper()
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	in, err := filestore.InspectAll(context.Background(), dir, filestore.Options{Scheme: sch, CRDs: crds})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestInspectAllReturnsTheObjects checks that InspectAll returns the
// objects of the readable files, in path order, a valid new file as the
// store would adopt it, and no object for a quarantined file.
func TestInspectAllReturnsTheObjects(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	for _, name := range []string{"b", "a"} {
		if err := s.Client().Create(ctx, hook(name)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("not: [yaml\n")(t, filepath.Join(dir, "hooks", "default", "bad.yaml"))
	writeFile(fmt.Sprintf(badHookYAML, "5m", "1m"))(t, filepath.Join(dir, "hooks", "default", "c.yaml"))
	in := inspectAll(t, dir)
	var names []string
	for _, o := range in.Objects {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	// c.yaml, a new file, becomes an object named by its path.
	if want := "Hook/a Hook/b Hook/c"; strings.Join(names, " ") != want {
		t.Errorf("objects %q, want %s", names, want)
	}
	if len(in.Problems) != 1 || in.Problems[0].Path != filepath.Join(dir, "hooks", "default", "bad.yaml") {
		t.Errorf("problems %+v, want bad.yaml", in.Problems)
	}
}
