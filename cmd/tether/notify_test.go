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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// notifyDocs reads the JSON documents the test's notifier wrote, one file
// per run, in the order of the occurrences they report.
func notifyDocs(t *testing.T, dir string) []map[string]any {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s is not one JSON document: %v\n%s", p, err, data)
		}
		docs = append(docs, doc)
	}
	at := func(doc map[string]any) time.Time {
		s, _ := doc["time"].(string)
		tm, _ := time.Parse(time.RFC3339Nano, s)
		return tm
	}
	sort.Slice(docs, func(i, j int) bool { return at(docs[i]).Before(at(docs[j])) })
	return docs
}

// TestNotifierGetsOneDocumentPerCrash is issue 15's acceptance for crash
// notifications: a Worker claims a Hook and exits with code 3; a notifier
// script configured for WorkerCrashed receives exactly one JSON document per
// crash, naming the Worker, the reason, the exit code and the Hook. A
// restart of tether run notifies nothing again; then, in that one tether
// run, the Worker restarts itself and crashes again until its crash budget
// is spent, and every one of those crashes is one more document, at once.
func TestNotifierGetsOneDocumentPerCrash(t *testing.T) {
	e := newWorkerEnv(t)
	base := t.TempDir()
	out := filepath.Join(base, "notified")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(base, "notifier.sh")
	// The file is written under a temporary name and renamed, so the test
	// never reads half a document; one file per run.
	body := "#!/bin/sh\nf=$(mktemp \"$1/run.XXXXXX\") && cat > \"$f\" && mv \"$f\" \"$f.json\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(base, "config.yaml")
	conf := fmt.Sprintf("notify:\n- name: crash-log\n  command: [%s, %s]\n  reasons: [WorkerCrashed]\n  timeout: 5s\n  minInterval: 0s\n", script, out)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e.runArgs = []string{"--config", cfg}

	e.create(&v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "task"}, Spec: v1.HookSpec{Goal: "crash", Steps: []v1.Step{{Name: "one"}}}})
	agent := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent"}}
	agent.Spec.Command = []string{"sh", "-c", tetherBin + ` claim task --worker "$TETHER_WORKER" || exit 9; exit 3`}
	e.create(agent)
	e.startRun()

	crashes := func(n int) *v1.Worker {
		var w *v1.Worker
		e.waitFor(20*time.Second, fmt.Sprintf("crash %d and the Hook freed", n), func() bool {
			w = e.worker("agent")
			return len(w.Status.Crashes) == n && w.Status.Phase == v1.WorkerCrashed && e.hook("task").Spec.Assignee == ""
		})
		return w
	}
	// waitDocs waits for n documents, then checks that no more come.
	waitDocs := func(n int) []map[string]any {
		e.waitFor(20*time.Second, fmt.Sprintf("%d notifications", n), func() bool { return len(notifyDocs(t, out)) >= n })
		time.Sleep(time.Second)
		docs := notifyDocs(t, out)
		if len(docs) != n {
			t.Fatalf("%d notifications, want exactly %d: %v", len(docs), n, docs)
		}
		return docs
	}
	check := func(doc map[string]any, rec v1.CrashRecord, count float64) {
		t.Helper()
		worker, _ := doc["worker"].(map[string]any)
		crash, _ := worker["crash"].(map[string]any)
		hooks, _ := worker["hooks"].([]any)
		if doc["reason"] != "WorkerCrashed" || doc["kind"] != "Worker" || doc["name"] != "agent" || doc["namespace"] != "default" ||
			doc["count"] != count || doc["message"] == "" || doc["time"] == "" {
			t.Errorf("notification %v", doc)
		}
		if crash["exitCode"] != float64(3) || crash["reason"] != "Exited" || crash["pid"] != float64(rec.PID) || crash["hook"] != "task" ||
			len(hooks) != 1 || hooks[0] != "task" {
			t.Errorf("notification's worker %v; want the crash of pid %d, exit code 3, hook task", worker, rec.PID)
		}
	}

	w := crashes(1)
	docs := waitDocs(1)
	check(docs[0], w.Status.Crashes[0], 1)

	// A new tether run sees the record on the Event and stays quiet.
	e.stopRun()
	e.startRun()
	e.waitFor(20*time.Second, "the new tether run to reconcile", func() bool {
		return strings.Contains(e.out.String(), `"controller":"notify"`)
	})
	waitDocs(1)

	// Automatic restarts in one tether run: client-go would fold repeated
	// WorkerCrashed Events into one series, written late from the third on;
	// each crash must still be a document of its own, at once.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := e.worker("agent")
		w.Spec.Restart.Auto, w.Spec.Restart.MaxCrashes = true, 5
		return e.c.Update(context.Background(), w)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.tether("worker", "restart", "agent"); code != 0 {
		t.Fatalf("worker restart: exit %d: %s", code, stderr)
	}
	e.waitFor(60*time.Second, "the crash budget spent", func() bool {
		return e.worker("agent").Status.Phase == v1.WorkerCrashLoop
	})
	w = e.worker("agent")
	if len(w.Status.Crashes) < 5 {
		t.Fatalf("%d crashes, want at least 5 (3 or more of them restarted automatically)", len(w.Status.Crashes))
	}
	docs = waitDocs(len(w.Status.Crashes))
	pids := map[float64]bool{}
	for i, rec := range w.Status.Crashes[1:] {
		var doc map[string]any
		for _, d := range docs {
			worker, _ := d["worker"].(map[string]any)
			if crash, _ := worker["crash"].(map[string]any); crash["pid"] == float64(rec.PID) {
				doc = d
			}
		}
		if doc == nil {
			t.Errorf("no notification of crash %d (pid %d)", i+2, rec.PID)
			continue
		}
		pids[float64(rec.PID)] = true
		check(doc, rec, 1)
	}
	if len(pids) != len(w.Status.Crashes)-1 {
		t.Errorf("notified crashes %v, want each of %d", pids, len(w.Status.Crashes)-1)
	}
}
