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

package console

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/storemanager"
)

var now = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func hookIn(name string, state v1.HookState, mutate ...func(*v1.Hook)) *v1.Hook {
	h := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.HookSpec{Goal: "goal of " + name, Steps: []v1.Step{{Name: "one"}, {Name: "two"}}},
		Status:     v1.HookStatus{State: state},
	}
	for _, m := range mutate {
		m(h)
	}
	return h
}

func newTestConsole(t *testing.T, objs ...client.Object) (*Handler, client.WithWatch) {
	t.Helper()
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&v1.Hook{}, &v1.Worker{}).Build()
	h, err := New(Options{Reader: c, Watcher: c, Now: func() time.Time { return now }, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return h, c
}

func get(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:8383"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestReadOnly(t *testing.T) {
	h, _ := newTestConsole(t, hookIn("a", v1.HookStepRunning))
	tests := []struct {
		method, target string
		want           int
	}{
		{http.MethodGet, "/", http.StatusOK},
		{http.MethodHead, "/", http.StatusOK},
		{http.MethodGet, "/hooks/default/a", http.StatusOK},
		{http.MethodGet, "/hooks/default/missing", http.StatusNotFound},
		{http.MethodGet, "/static/console.js", http.StatusOK},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
		{http.MethodPut, "/hooks/default/a", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/hooks/default/a", http.StatusMethodNotAllowed},
		{http.MethodPatch, "/workers/default/w", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			w := get(t, h, tt.method, tt.target)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, w.Body)
			}
			if tt.want == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", w.Header().Get("Allow"))
			}
		})
	}
}

func TestLoopbackOnly(t *testing.T) {
	h, _ := newTestConsole(t)
	for host, want := range map[string]int{
		"127.0.0.1:8383": http.StatusOK, "localhost:8383": http.StatusOK, "[::1]:8383": http.StatusOK, "localhost": http.StatusOK,
		"evil.example:8383": http.StatusMisdirectedRequest, "10.0.0.1:8383": http.StatusMisdirectedRequest,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %s: status %d, want %d", host, w.Code, want)
		}
	}
}

func TestUntrustedTextIsEscaped(t *testing.T) {
	evil := `<script>alert(1)</script><img src=x onerror="alert(2)">`
	h, _ := newTestConsole(t, hookIn("evil", v1.HookAwaitingHuman, func(h *v1.Hook) {
		h.Spec.Goal = evil
		h.Spec.Steps[0].Description = evil
		h.Spec.Assignee = "w"
		h.Status.History = []v1.HistoryEntry{{Time: metav1.NewTime(now.Add(-time.Minute)), Event: "await", To: v1.HookAwaitingHuman, Actor: evil, Message: evil}}
	}))
	for _, target := range []string{"/", "/?q=" + "%3Cscript%3E", "/hooks/default/evil"} {
		body := get(t, h, http.MethodGet, target).Body.String()
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s renders the markup:\n%s", target, body)
		}
		if target != "/" && !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("%s does not show the text escaped", target)
		}
	}
}

func TestOverviewOrderAndFilters(t *testing.T) {
	hooks := []v1.Hook{
		*hookIn("done", v1.HookCompleted),
		*hookIn("running", v1.HookStepRunning),
		*hookIn("failed", v1.HookFailed),
		*hookIn("human", v1.HookAwaitingHuman),
		*hookIn("recovering", v1.HookRecovering),
		*hookIn("looping", v1.HookStepRunning, func(h *v1.Hook) { h.Spec.Assignee = "w1" }),
		*hookIn("other-ns", v1.HookAwaitingHuman, func(h *v1.Hook) { h.Namespace = "team" }),
		*hookIn("stale", v1.HookStepRunning, func(h *v1.Hook) {
			h.Status.LastHeartbeat = &metav1.MicroTime{Time: now.Add(-2 * time.Minute)}
		}),
	}
	workers := []v1.Worker{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w0"}, Status: v1.WorkerStatus{Phase: v1.WorkerRunning}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w1"}, Status: v1.WorkerStatus{Phase: v1.WorkerCrashLoop}},
	}
	stale := func(*v1.Hook) time.Duration { return time.Minute }
	tests := []struct {
		name    string
		f       filter
		hooks   []string
		workers []string
	}{
		{"all", filter{}, []string{"human", "other-ns", "recovering", "failed", "looping", "stale", "running", "done"}, []string{"w1", "w0"}},
		{"namespace", filter{Namespace: "team"}, []string{"other-ns"}, nil},
		{"state", filter{State: "awaiting_human"}, []string{"human", "other-ns"}, []string{"w1", "w0"}},
		{"text", filter{Text: "GOAL OF FAIL"}, []string{"failed"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := buildOverview(tt.f, hooks, workers, now, stale)
			var got, gotW []string
			for _, r := range d.Hooks {
				got = append(got, r.Name)
			}
			for _, r := range d.Workers {
				gotW = append(gotW, r.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.hooks, ",") || strings.Join(gotW, ",") != strings.Join(tt.workers, ",") {
				t.Errorf("hooks %v workers %v, want %v %v", got, gotW, tt.hooks, tt.workers)
			}
		})
	}
}

// openEventStream serves h and opens its event stream, for 20 s at most;
// both end with the test.
func openEventStream(t *testing.T, h http.Handler) *http.Response {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func TestEventsFollowChanges(t *testing.T) {
	h, c := newTestConsole(t, hookIn("a", v1.HookStepRunning))
	resp := openEventStream(t, h)
	ctx := resp.Request.Context()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	lines := bufio.NewScanner(resp.Body)
	waitFor := func(want string) {
		t.Helper()
		for lines.Scan() {
			if strings.Contains(lines.Text(), want) {
				return
			}
		}
		t.Fatalf("the stream ended before %q: %v", want, lines.Err())
	}
	waitFor("event: ready")
	hk := &v1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, hk); err != nil {
		t.Fatal(err)
	}
	hk.Status.State = v1.HookAwaitingHuman
	if err := c.Status().Update(ctx, hk); err != nil {
		t.Fatal(err)
	}
	waitFor("data: Hook default/a")
}

func TestCheckAddress(t *testing.T) {
	tests := []struct {
		addr        string
		allowRemote bool
		ok          bool
	}{
		{"127.0.0.1:8384", false, true},
		{"localhost:8384", false, true},
		{"[::1]:0", false, true},
		{":8384", false, false},
		{"0.0.0.0:8384", false, false},
		{"192.168.1.2:8384", false, false},
		{":8384", true, true},
		{"0.0.0.0:8384", true, true},
	}
	for _, tt := range tests {
		err := CheckAddress(tt.addr, tt.allowRemote, "--allow-remote")
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddress(%q, %v) = %v, want ok %v", tt.addr, tt.allowRemote, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("the error does not name the flag: %v", err)
		}
	}
}

func TestWorkerPage(t *testing.T) {
	exit := int32(137)
	wk := &v1.Worker{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent-1"},
		Spec: v1.WorkerSpec{Command: []string{"claude"}, Env: []v1.EnvVar{{Name: "API_TOKEN", Value: "s3cret-value"}},
			Restart: v1.RestartPolicy{Auto: true, MaxCrashes: 3, Window: &metav1.Duration{Duration: 10 * time.Minute}}},
		Status: v1.WorkerStatus{Phase: v1.WorkerCrashLoop, Restarts: 3, Crashes: []v1.CrashRecord{
			{Time: metav1.NewTime(now.Add(-5 * time.Minute)), PID: 41, Reason: "exited", ExitCode: &exit, Held: []v1.HeldHook{{Name: "freed-hook"}}, Restarted: true},
			{Time: metav1.NewTime(now.Add(-time.Minute)), PID: 42, Reason: "<b>killed</b>", Hook: "other-hook"},
		}},
	}
	h, _ := newTestConsole(t, wk)
	h.o.Logs = func(_ context.Context, w *v1.Worker, limit int64) (string, error) {
		return "last line of " + w.Name, nil
	}
	w := get(t, h, http.MethodGet, "/workers/default/agent-1")
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d:\n%s", w.Code, body)
	}
	for _, want := range []string{"CrashLoop", `href="/hooks/default/freed-hook"`, `href="/hooks/default/other-hook"`, "restarted",
		"exit 137", "&lt;b&gt;killed&lt;/b&gt;", "API_TOKEN", "last line of agent-1", `class="crash"`, `class="window"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the Worker page lacks %q", want)
		}
	}
	if strings.Contains(body, "s3cret-value") {
		t.Error("the Worker page shows an environment value")
	}
}

func TestOverviewListsMaxRowsUnlessAll(t *testing.T) {
	var hooks []v1.Hook
	for i := range MaxRows + 10 {
		hooks = append(hooks, *hookIn(fmt.Sprintf("h-%04d", i), v1.HookStepRunning))
	}
	hooks = append(hooks, *hookIn("zz-needs-a-person", v1.HookAwaitingHuman))
	stale := func(*v1.Hook) time.Duration { return time.Hour }
	d := buildOverview(filter{}, hooks, nil, now, stale)
	if len(d.Hooks) != MaxRows || d.Matched != MaxRows+11 || d.Hooks[0].Name != "zz-needs-a-person" || d.MoreURL != "/?all=1" {
		t.Errorf("listed %d of %d, first %s, more %q", len(d.Hooks), d.Matched, d.Hooks[0].Name, d.MoreURL)
	}
	if d := buildOverview(filter{All: true}, hooks, nil, now, stale); len(d.Hooks) != MaxRows+11 || d.MoreURL != "" {
		t.Errorf("?all=1 listed %d, more %q", len(d.Hooks), d.MoreURL)
	}
}

// TestHookPageReadsTrimmedCheckpointsWhole: the cache of tether run holds
// Checkpoints without their files (storemanager.CacheTransform); the Hook
// page counts the files of the stored objects, read through the API reader.
func TestHookPageReadsTrimmedCheckpointsWhole(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	hk := hookIn("task", v1.HookStepRunning)
	whole := &v1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task-cp-1"},
		Spec: v1.CheckpointSpec{HookName: "task", Seq: 1, Trigger: v1.TriggerManual, Description: "before the refactor",
			Files: []v1.FileSnapshot{{Path: "a.go"}, {Path: "b.go"}, {Path: "c.go"}}},
	}
	trimmedAny, err := storemanager.CacheTransform()(whole.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	trimmed := trimmedAny.(*v1.Checkpoint)
	if !storemanager.IsTrimmed(trimmed) || len(trimmed.Spec.Files) != 0 {
		t.Fatalf("the cache transform kept %d files (trimmed %t); the test needs a trimmed copy", len(trimmed.Spec.Files), storemanager.IsTrimmed(trimmed))
	}
	stored := fake.NewClientBuilder().WithScheme(s).WithObjects(hk.DeepCopy(), whole.DeepCopy()).Build()
	// The cache answers a list of Checkpoints with trimmed copies, as the
	// Manager's cache does; the fake client refuses the marker as stored data.
	cache := interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).WithObjects(hk.DeepCopy(), whole.DeepCopy()).Build(), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if cps, ok := list.(*v1.CheckpointList); ok {
				for i := range cps.Items {
					cps.Items[i] = *trimmed.DeepCopy()
				}
			}
			return nil
		},
	})
	h, err := New(Options{Reader: cache, APIReader: stored, Watcher: cache, Now: func() time.Time { return now }, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	body := get(t, h, http.MethodGet, "/hooks/default/task").Body.String()
	_, row, found := strings.Cut(body, `data-checkpoint="task-cp-1"`)
	row, _, _ = strings.Cut(row, "</tr>")
	if !found {
		t.Fatalf("no row of the checkpoint in the page:\n%s", body)
	}
	if !strings.Contains(row, "<td>3</td>") || !strings.Contains(row, "before the refactor") {
		t.Fatalf("checkpoint row %q; want its 3 files, as stored", row)
	}
}

// startOption is a list option the tests pass as Options.WatchStart.
type startOption struct{}

func (startOption) ApplyToList(*client.ListOptions) {}

// TestEventStreamStartsFromAMetadataList checks that each watch of the
// event stream takes its resourceVersion from an unstructured list of its
// kind that asks for one object, with Options.WatchStart, one list at a
// time: on the local store a typed list read every object whole (50,000
// Checkpoints and 20,000 Events at the fleet's size) for its
// resourceVersion alone, and the four at once.
func TestEventStreamStartsFromAMetadataList(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	type listed struct {
		gvk     string
		limit   int64
		started bool
	}
	var mu sync.Mutex
	var lists []listed
	var inFlight, maxInFlight atomic.Int32
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(s).WithObjects(hookIn("a", v1.HookStepRunning)).Build(), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			l := listed{gvk: fmt.Sprintf("%T", list), limit: (&client.ListOptions{}).ApplyOptions(opts).Limit}
			if u, ok := list.(*unstructured.UnstructuredList); ok {
				l.gvk = u.GroupVersionKind().String()
			}
			for _, o := range opts {
				if _, ok := o.(startOption); ok {
					l.started = true
				}
			}
			mu.Lock()
			lists = append(lists, l)
			mu.Unlock()
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			if n > maxInFlight.Load() {
				maxInFlight.Store(n)
			}
			// Long enough for the four watches' lists to overlap, were they not
			// one at a time.
			time.Sleep(50 * time.Millisecond)
			return c.List(ctx, list, opts...)
		},
	})
	h, err := New(Options{Reader: c, Watcher: c, WatchStart: []client.ListOption{startOption{}}, Now: func() time.Time { return now }, LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	resp := openEventStream(t, h)
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatalf("the event stream: %v %q", err, line)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{}
	for _, gvk := range []string{
		v1.GroupVersion.WithKind("HookList").String(), v1.GroupVersion.WithKind("WorkerList").String(),
		v1.GroupVersion.WithKind("CheckpointList").String(), "/v1, Kind=EventList",
	} {
		want[gvk] = true
	}
	for _, l := range lists {
		if !want[l.gvk] || l.limit != 1 || !l.started {
			t.Errorf("the event stream listed %s with limit %d (WatchStart passed: %t); want an unstructured list of a watched kind, limit 1, with WatchStart", l.gvk, l.limit, l.started)
		}
		delete(want, l.gvk)
	}
	for gvk := range want {
		t.Errorf("the event stream never listed %s", gvk)
	}
	if n := maxInFlight.Load(); n != 1 {
		t.Errorf("%d start lists ran at once; want one at a time", n)
	}
}
