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

package controllers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/notify"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// notifierScript writes each JSON document it reads on stdin to a file of
// its own in dir, atomically, and returns its argv.
func notifierScript(t *testing.T, dir string) []string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "notifier.sh")
	body := "#!/bin/sh\nf=$(mktemp \"$1/doc.XXXXXX\") && cat > \"$f\" && mv \"$f\" \"$f.json\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"sh", script, dir}
}

// received reads the documents a notifierScript wrote, oldest name first.
func received(t *testing.T, dir string) []notify.Payload {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var out []notify.Payload
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc notify.Payload
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v: %q", p, err, data)
		}
		out = append(out, doc)
	}
	return out
}

// notifyEnv is a store with only the notify reconciler running on it, so
// that the test records the Events itself.
type notifyEnv struct {
	*storeEnv
	t    *testing.T
	cfg  *config.Config
	stop func()
}

func newNotifyEnv(t *testing.T, notifiers ...config.Notifier) *notifyEnv {
	t.Helper()
	cfg := testConfig(t)
	cfg.Notify = notifiers
	e := &notifyEnv{storeEnv: newStore(t), t: t, cfg: cfg}
	e.start()
	t.Cleanup(func() { e.stop() })
	return e
}

// start runs a fresh Manager with the notify reconciler, as a new tether
// run would.
func (e *notifyEnv) start() {
	e.t.Helper()
	mgr := testsupport.LocalManager(e.t, e.store)
	if err := controllers.SetupNotify(mgr, e.cfg, "", true); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	e.stop = func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			e.t.Errorf("manager: %v", err)
		}
		e.stop = func() {}
	}
}

func (e *notifyEnv) worker(name string, crashes ...v1.CrashRecord) *v1.Worker {
	e.t.Helper()
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.WorkerSpec{Command: []string{"true"}}}
	if err := e.c.Create(context.Background(), w); err != nil {
		e.t.Fatal(err)
	}
	w.Status.Phase = v1.WorkerRunning
	w.Status.Crashes = crashes
	w.Status.Restarts = int32(len(crashes))
	if err := e.c.Status().Update(context.Background(), w); err != nil {
		e.t.Fatal(err)
	}
	return w
}

// event records an Event about obj as the reconcilers and verbs do.
func (e *notifyEnv) event(obj client.Object, kind, reason, note string, at time.Time) *corev1.Event {
	e.t.Helper()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s.%x", obj.GetName(), at.UnixNano())},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: v1.GroupVersion.String(), Kind: kind, Namespace: "default", Name: obj.GetName(), UID: obj.GetUID(),
		},
		Reason: reason, Message: note, Type: corev1.EventTypeWarning, Action: "Test",
		EventTime: metav1.NewMicroTime(at), ReportingController: "test", ReportingInstance: "test",
	}
	if err := e.c.Create(context.Background(), ev); err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// record waits until ev carries a record naming every notifier given.
func (e *notifyEnv) record(ev *corev1.Event, names ...string) notify.Record {
	e.t.Helper()
	var rec notify.Record
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &corev1.Event{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(ev), cur); err != nil {
			return false, err
		}
		var err error
		if rec, err = notify.RecordOf(cur); err != nil {
			return false, err
		}
		for _, n := range names {
			if _, ok := rec[n]; !ok {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("event %s: no record for %v: %v (record %v)", ev.Name, names, err, rec)
	}
	return rec
}

// waitDocs waits until dir holds n documents and checks no more come.
func waitDocs(t *testing.T, dir string, n int) []notify.Payload {
	t.Helper()
	var docs []notify.Payload
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		docs = received(t, dir)
		return len(docs) >= n, nil
	})
	if err != nil {
		t.Fatalf("%d documents received, want %d", len(docs), n)
	}
	// A duplicate would come from the same reconcile or the next one.
	time.Sleep(300 * time.Millisecond)
	if docs = received(t, dir); len(docs) != n {
		t.Fatalf("%d documents received, want exactly %d: %+v", len(docs), n, docs)
	}
	return docs
}

func notifier(name string, argv []string, interval time.Duration, reasons ...config.NotifyReason) config.Notifier {
	return config.Notifier{
		Name: name, Command: argv, Reasons: reasons,
		Timeout: metav1.Duration{Duration: 5 * time.Second}, MinInterval: &metav1.Duration{Duration: interval},
	}
}

func TestNotifyWorkerCrashOnceEvenAcrossRestarts(t *testing.T) {
	out := t.TempDir()
	e := newNotifyEnv(t, notifier("script", notifierScript(t, out), 0, config.NotifyWorkerCrashed))
	code := int32(3)
	crashAt := time.Now().Add(-2 * time.Second)
	older := v1.CrashRecord{Time: metav1.NewTime(crashAt.Add(-time.Minute)), PID: 10, Reason: "Signaled", Signal: new(int32)}
	crash := v1.CrashRecord{
		Time: metav1.NewTime(crashAt), PID: 11, Reason: "Exited", ExitCode: &code, Hook: "fix-login",
		Held: []v1.HeldHook{{Name: "fix-login", Generation: 2}}, Restarted: true,
	}
	w := e.worker("agent-1", older, crash)
	ev := e.event(w, "Worker", controllers.EventWorkerCrashed, "exited with code 3; held hook fix-login", crashAt.Add(time.Second))
	// Not a notify reason, and a Worker's WorkerStarted: nobody hears of them.
	e.event(w, "Worker", controllers.EventWorkerStarted, "started", crashAt.Add(2*time.Second))

	docs := waitDocs(t, out, 1)
	d := docs[0]
	if d.Reason != config.NotifyWorkerCrashed || d.EventReason != controllers.EventWorkerCrashed || d.Kind != "Worker" ||
		d.Name != "agent-1" || d.Namespace != "default" || d.Notifier != "script" || d.Event != ev.Name || d.Count != 1 {
		t.Errorf("payload %+v", d)
	}
	if d.Worker == nil || d.Worker.Crash == nil || d.Worker.Crash.ExitCode == nil || *d.Worker.Crash.ExitCode != 3 ||
		d.Worker.Crash.PID != 11 || strings.Join(d.Worker.Hooks, ",") != "fix-login" {
		t.Fatalf("worker in payload %+v", d.Worker)
	}
	if rec := e.record(ev, "script"); rec["script"].Outcome != notify.Sent {
		t.Errorf("record %+v", rec)
	}

	// A new tether run finds the record and notifies nothing again.
	e.stop()
	e.start()
	e.event(w, "Worker", controllers.EventWorkerStarted, "started again", time.Now())
	waitDocs(t, out, 1)

	// A later crash is notified, with its own record.
	e.event(w, "Worker", controllers.EventWorkerCrashed, "killed by signal 9", time.Now())
	waitDocs(t, out, 2)
}

func TestNotifyMinIntervalPerObjectAndReason(t *testing.T) {
	out := t.TempDir()
	e := newNotifyEnv(t, notifier("script", notifierScript(t, out), time.Hour))
	a := e.worker("a")
	b := e.worker("b")
	now := time.Now()
	first := e.event(a, "Worker", controllers.EventWorkerCrashed, "crash 1", now.Add(-3*time.Second))
	e.record(first, "script")
	second := e.event(a, "Worker", controllers.EventWorkerCrashed, "crash 2", now.Add(-2*time.Second))
	if rec := e.record(second, "script"); rec["script"].Outcome != notify.Throttled {
		t.Errorf("second crash of a within the interval: record %+v, want throttled", rec)
	}
	// Another reason of the same object, and the same reason of another object.
	exhausted := e.event(a, "Worker", controllers.EventRestartsExhausted, "restarts exhausted", now.Add(-time.Second))
	otherWorker := e.event(b, "Worker", controllers.EventWorkerCrashed, "crash of b", now)
	e.record(exhausted, "script")
	e.record(otherWorker, "script")
	docs := waitDocs(t, out, 3)
	var got []string
	for _, d := range docs {
		got = append(got, d.Name+"/"+string(d.Reason))
	}
	sort.Strings(got)
	if want := "a/RestartsExhausted,a/WorkerCrashed,b/WorkerCrashed"; strings.Join(got, ",") != want {
		t.Errorf("notified %v, want %s", got, want)
	}
}

func TestNotifyHookReasonsAndAge(t *testing.T) {
	out := t.TempDir()
	e := newNotifyEnv(t, notifier("done", notifierScript(t, out), 0, config.NotifyCompleted, config.NotifyHookStale))
	h := newHook("fix-login", time.Minute, "one", "two")
	if err := e.c.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	old := e.event(h, "Hook", "Completed", "long ago", time.Now().Add(-2*controllers.NotifyMaxAge))
	e.event(h, "Hook", "AwaitingHuman", "not asked for", time.Now())
	stale := e.event(h, "Hook", v1.ReasonHeartbeatExpired, "no heartbeat", time.Now())
	e.record(stale, "done")
	docs := waitDocs(t, out, 1)
	if d := docs[0]; d.Reason != config.NotifyHookStale || d.EventReason != v1.ReasonHeartbeatExpired || d.Hook == nil || d.Hook.Goal != "test fix-login" {
		t.Errorf("payload %+v hook %+v", d, d.Hook)
	}
	cur := &corev1.Event{}
	if err := e.c.Get(context.Background(), client.ObjectKeyFromObject(old), cur); err != nil {
		t.Fatal(err)
	}
	if _, ok := cur.Annotations[notify.Annotation]; ok {
		t.Errorf("an Event older than %s was handled: %v", controllers.NotifyMaxAge, cur.Annotations)
	}
}

func TestNotifyFailingAndSlowNotifiers(t *testing.T) {
	out := t.TempDir()
	slow := notifier("slow", []string{"sleep", "30"}, 0)
	slow.Timeout.Duration = 200 * time.Millisecond
	e := newNotifyEnv(t,
		slow,
		notifier("missing", []string{filepath.Join(t.TempDir(), "no-such-command")}, 0),
		notifier("failing", []string{"sh", "-c", "echo boom >&2; exit 4"}, 0),
		notifier("script", notifierScript(t, out), 0),
	)
	w := e.worker("agent-1")
	start := time.Now()
	ev := e.event(w, "Worker", controllers.EventWorkerCrashed, "crash", time.Now())
	// The working notifier is not held up by the slow one.
	waitDocs(t, out, 1)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the working notifier took %s", took)
	}
	for _, n := range []string{"slow", "missing", "failing"} {
		if rec := e.record(ev, n); rec[n].Outcome != notify.Sent {
			t.Errorf("%s: record %+v", n, rec)
		}
	}
	// Each failure is an Event of its own, naming its notifier: client-go's
	// recorder would fold the three into one series showing the first.
	var notes []string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list := &corev1.EventList{}
		if err := e.c.List(ctx, list, client.InNamespace("default")); err != nil {
			return false, err
		}
		notes = nil
		for _, x := range list.Items {
			if x.Reason == controllers.EventNotifyFailed && x.InvolvedObject.Name == "agent-1" {
				notes = append(notes, x.Message)
			}
		}
		all := strings.Join(notes, "\n")
		for _, n := range []string{"slow", "missing", "failing"} {
			if !strings.Contains(all, "notifier "+n+" ") {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("NotifyFailed Events %q, want one naming each failed notifier", notes)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "about WorkerCrashed") {
		t.Errorf("NotifyFailed Events %q do not say what the notification was about", notes)
	}
}

// TestNotifySeries: client-go's recorder reports a repeat of the same
// Event as a higher series count on the same object; each observation is
// notified, subject to the minimum interval.
func TestNotifySeries(t *testing.T) {
	out := t.TempDir()
	e := newNotifyEnv(t, notifier("every", notifierScript(t, out), 0), notifier("hourly", []string{"true"}, time.Hour))
	w := e.worker("agent-1")
	ev := e.event(w, "Worker", controllers.EventWorkerCrashed, "crash", time.Now().Add(-time.Second))
	e.record(ev, "every", "hourly")
	waitDocs(t, out, 1)
	cur := &corev1.Event{}
	if err := e.c.Get(context.Background(), client.ObjectKeyFromObject(ev), cur); err != nil {
		t.Fatal(err)
	}
	cur.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(time.Now())}
	if err := e.c.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	if docs := waitDocs(t, out, 2); docs[1].Count != 2 && docs[0].Count != 2 {
		t.Errorf("no notification of the second observation: %+v", docs)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		rec := e.record(ev, "hourly")
		return rec["hourly"].Count == 2, nil
	})
	rec := e.record(ev, "hourly")
	if err != nil || rec["hourly"].Outcome != notify.Throttled {
		t.Errorf("hourly notifier's record of the second observation %+v, want throttled", rec)
	}
	// The throttled observation keeps the time of the last run, from which
	// the interval counts.
	if sent, ok := rec.LastSent("hourly"); !ok || !sent.Equal(notify.Observed(ev).Time) {
		t.Errorf("hourly notifier last sent %s %v, want the first observation's time %s", sent, ok, notify.Observed(ev).Time)
	}
}
