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
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// filter is the overview's query string: namespace, state and text, so a
// filtered view is a link that can be shared.
type filter struct {
	Namespace string
	State     string
	Text      string
	// All shows every row, not only the first MaxRows.
	All bool
}

// MaxRows is how many Hooks the overview lists unless asked for all
// (?all=1): the first, by what needs a person, of a large fleet; the
// counts cover every Hook.
const MaxRows = 500

func filterOf(r *http.Request) filter {
	q := r.URL.Query()
	return filter{Namespace: q.Get("namespace"), State: q.Get("state"), Text: strings.TrimSpace(q.Get("q")), All: q.Get("all") != ""}
}

// with is the overview URL of f with state set to state.
func (f filter) with(state string) string {
	v := url.Values{}
	if f.Namespace != "" {
		v.Set("namespace", f.Namespace)
	}
	if state != "" {
		v.Set("state", state)
	}
	if f.Text != "" {
		v.Set("q", f.Text)
	}
	if f.All {
		v.Set("all", "1")
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

func (f filter) keepHook(h *v1.Hook) bool {
	if f.Namespace != "" && h.Namespace != f.Namespace {
		return false
	}
	if f.State != "" && string(h.Status.State.OrInitializing()) != f.State {
		return false
	}
	return f.Text == "" || containsFold(f.Text, h.Name, h.Namespace, h.Spec.Goal, h.Spec.Assignee)
}

func (f filter) keepWorker(w *v1.Worker) bool {
	if f.Namespace != "" && w.Namespace != f.Namespace {
		return false
	}
	return f.Text == "" || containsFold(f.Text, w.Name, w.Namespace, string(w.Status.Phase))
}

func containsFold(text string, fields ...string) bool {
	text = strings.ToLower(text)
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), text) {
			return true
		}
	}
	return false
}

// hookRow is one Hook of the overview.
type hookRow struct {
	Namespace, Name, URL string
	State                string
	Tone                 string
	Step, Attempt        string
	Assignee             string
	AssigneeURL          string
	Heartbeat            string
	HeartbeatTone        string
	Checkpoint           string
	Badges               []string
}

// workerRow is one Worker of the overview.
type workerRow struct {
	Namespace, Name, URL string
	Phase, Tone          string
	Process              string
	Restarts             int32
	Crashes              string
	LastCrash            string
	rank                 int
}

// stateCount is one state's count, with the link that filters on it.
type stateCount struct {
	State string
	Count int
	URL   string
	Tone  string
	On    bool
}

type overviewData struct {
	Filter filter
	AllURL string
	// Matched is how many Hooks the filters keep; Hooks holds at most
	// MaxRows of them unless the filter asks for all, and MoreURL does.
	Matched    int
	MoreURL    string
	Counts     []stateCount
	Hooks      []hookRow
	Workers    []workerRow
	TotalHooks int
	Namespaces []string
	States     []string
}

// stateRank orders states by how much they need a person.
var stateRank = map[v1.HookState]int{
	v1.HookAwaitingHuman:  0,
	v1.HookRecovering:     1,
	v1.HookFailed:         2,
	v1.HookStepValidating: 5,
	v1.HookStepRunning:    5,
	v1.HookStepPending:    6,
	v1.HookInitializing:   7,
	v1.HookCompleted:      8,
	v1.HookAbandoned:      9,
}

// stateTone is the colour class of a state.
func stateTone(s v1.HookState) string {
	switch s {
	case v1.HookRecovering, v1.HookFailed:
		return "red"
	case v1.HookAwaitingHuman:
		return "amber"
	case v1.HookCompleted, v1.HookAbandoned:
		return "dim"
	case v1.HookStepRunning, v1.HookStepValidating:
		return "green"
	}
	return ""
}

func phaseTone(p v1.WorkerPhase) string {
	switch p {
	case v1.WorkerCrashLoop, v1.WorkerCrashed, v1.WorkerLost:
		return "red"
	case v1.WorkerRestarting:
		return "amber"
	case v1.WorkerStopped:
		return "dim"
	case v1.WorkerRunning:
		return "green"
	}
	return ""
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// The page only reads what it lists: a cache need not copy it.
	hooks := &v1.HookList{}
	if err := h.o.Reader.List(ctx, hooks, client.UnsafeDisableDeepCopy); err != nil {
		h.fail(w, r, err)
		return
	}
	workers := &v1.WorkerList{}
	if err := h.o.Reader.List(ctx, workers, client.UnsafeDisableDeepCopy); err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, "overview", page{Title: "tether", Live: h.o.Watcher != nil,
		Body: buildOverview(filterOf(r), hooks.Items, workers.Items, h.o.Now(), h.staleAfter)})
}

func (h *Handler) staleAfter(hk *v1.Hook) time.Duration {
	return h.o.Config.Effective(&hk.Spec).StaleAfter
}

// buildOverview is the overview of hooks and workers that f keeps, sorted
// by what needs a person first, then by namespace and name.
func buildOverview(f filter, hooks []v1.Hook, workers []v1.Worker, now time.Time, staleAfter func(*v1.Hook) time.Duration) *overviewData {
	d := &overviewData{Filter: f, AllURL: f.with(""), TotalHooks: len(hooks)}
	looping := map[string]bool{}
	namespaces := map[string]bool{}
	for i := range workers {
		wk := &workers[i]
		namespaces[wk.Namespace] = true
		if wk.Status.Phase == v1.WorkerCrashLoop {
			looping[wk.Namespace+"/"+wk.Name] = true
		}
		if f.keepWorker(wk) {
			d.Workers = append(d.Workers, workerRowOf(wk, now))
		}
	}
	// Rows are ranked and sorted first and built only for the Hooks listed:
	// a fleet's overview makes no garbage for the rows it does not show.
	type candidate struct {
		hk      *v1.Hook
		rank    int
		looping bool
	}
	var cands []candidate
	counts := map[v1.HookState]int{}
	for i := range hooks {
		hk := &hooks[i]
		namespaces[hk.Namespace] = true
		if f.Namespace == "" || hk.Namespace == f.Namespace {
			counts[hk.Status.State.OrInitializing()]++
		}
		if !f.keepHook(hk) {
			continue
		}
		loop := looping[hk.Namespace+"/"+hk.Spec.Assignee]
		cands = append(cands, candidate{hk: hk, rank: hookRank(hk, now, staleAfter(hk), loop), looping: loop})
	}
	for _, s := range hookfsm.States() {
		d.States = append(d.States, string(s))
		d.Counts = append(d.Counts, stateCount{State: string(s), Count: counts[s], URL: f.with(string(s)), Tone: stateTone(s), On: f.State == string(s)})
	}
	for ns := range namespaces {
		d.Namespaces = append(d.Namespaces, ns)
	}
	slices.Sort(d.Namespaces)
	slices.SortFunc(cands, func(a, b candidate) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if c := strings.Compare(a.hk.Namespace, b.hk.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.hk.Name, b.hk.Name)
	})
	d.Matched = len(cands)
	if !f.All && len(cands) > MaxRows {
		cands = cands[:MaxRows]
		all := f
		all.All = true
		d.MoreURL = all.with(f.State)
	}
	d.Hooks = make([]hookRow, 0, len(cands))
	for _, c := range cands {
		d.Hooks = append(d.Hooks, hookRowOf(c.hk, now, staleAfter(c.hk), c.looping))
	}
	slices.SortStableFunc(d.Workers, func(a, b workerRow) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return d
}

// hookRank is where hk's row goes: by its state, with a stale heartbeat
// and a crash-looping Worker raising it; hookRowOf badges the same facts.
func hookRank(hk *v1.Hook, now time.Time, staleAfter time.Duration, assigneeLooping bool) int {
	state := hk.Status.State.OrInitializing()
	rank := stateRank[state]
	if hb := hk.Status.LastHeartbeat; hb != nil && (hookfsm.HeartbeatExpected(hk) || state == v1.HookRecovering) && now.Sub(hb.Time) >= staleAfter {
		rank = min(rank, 4)
	}
	if assigneeLooping {
		rank = min(rank, 3)
	}
	return rank
}

func hookRowOf(hk *v1.Hook, now time.Time, staleAfter time.Duration, assigneeLooping bool) hookRow {
	st := &hk.Status
	state := hk.Status.State.OrInitializing()
	row := hookRow{Namespace: hk.Namespace, Name: hk.Name, URL: hookURL(hk.Namespace, hk.Name),
		State: string(state), Tone: stateTone(state), Step: "-", Attempt: "-", Assignee: dash(hk.Spec.Assignee),
		Heartbeat: "-", Checkpoint: "-"}
	if hk.Spec.Assignee != "" {
		row.AssigneeURL = workerURL(hk.Namespace, hk.Spec.Assignee)
	}
	if cs := st.CurrentStep; cs != nil {
		row.Step = fmt.Sprintf("%d/%d %s", cs.Index+1, len(hk.Spec.Steps), cs.Name)
		row.Attempt = strconv.Itoa(int(cs.Attempt))
	}
	if hb := st.LastHeartbeat; hb != nil {
		d := now.Sub(hb.Time)
		row.Heartbeat = age(d) + " ago"
		switch {
		case !hookfsm.HeartbeatExpected(hk) && state != v1.HookRecovering:
			row.HeartbeatTone = "dim"
		case d >= staleAfter:
			row.HeartbeatTone = "red"
			row.Badges = append(row.Badges, "stale")
		case float64(d) >= 0.75*float64(staleAfter):
			row.HeartbeatTone = "amber"
		}
	}
	if lc := st.LastCheckpoint; lc != nil {
		row.Checkpoint = fmt.Sprintf("%s (%s, %s ago)", lc.Name, lc.Trigger, age(now.Sub(lc.Time.Time)))
	}
	if hk.Spec.Suspend {
		row.Badges = append(row.Badges, "paused")
	}
	if recovering(hk) {
		row.Badges = append(row.Badges, "recovering")
	}
	if c := meta.FindStatusCondition(st.Conditions, v1.ConditionHistoryConsistent); c != nil && c.Status == metav1.ConditionFalse {
		row.Badges = append(row.Badges, "history mismatch")
	}
	if assigneeLooping {
		row.Badges = append(row.Badges, "worker crash-looping")
	}
	return row
}

func workerRowOf(wk *v1.Worker, now time.Time) workerRow {
	st := &wk.Status
	row := workerRow{Namespace: wk.Namespace, Name: wk.Name, URL: workerURL(wk.Namespace, wk.Name),
		Phase: dash(string(st.Phase)), Tone: phaseTone(st.Phase), Process: processOf(wk), Restarts: st.Restarts,
		LastCrash: "-", rank: 5}
	switch st.Phase {
	case v1.WorkerCrashLoop:
		row.rank = 0
	case v1.WorkerCrashed, v1.WorkerLost:
		row.rank = 1
	case v1.WorkerRestarting:
		row.rank = 2
	case v1.WorkerStopped:
		row.rank = 8
	}
	n := workerfsm.CrashesInWindow(&wk.Spec, st, now)
	row.Crashes = fmt.Sprintf("%d/%d in %s", n, workerfsm.MaxCrashes(&wk.Spec), age(workerfsm.CrashWindow(&wk.Spec)))
	if k := len(st.Crashes); k > 0 {
		c := st.Crashes[k-1]
		row.LastCrash = fmt.Sprintf("%s ago: %s", age(now.Sub(c.Time.Time)), c.Reason)
	}
	return row
}

// processOf is where w runs: its PID, its Pod, or "pod" before it has one.
func processOf(wk *v1.Worker) string {
	st := &wk.Status
	switch {
	case st.PID != 0:
		s := "pid " + strconv.Itoa(int(st.PID))
		if st.Host != "" {
			s += " on " + st.Host
		}
		return s
	case st.PodName != "":
		s := "pod " + st.PodName
		if st.NodeName != "" {
			s += " on " + st.NodeName
		}
		return s
	case wk.Spec.Template != nil:
		return "pod"
	}
	return "-"
}

func hookURL(ns, name string) string {
	return "/hooks/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

func workerURL(ns, name string) string {
	return "/workers/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

// age is d as kubectl prints ages.
func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return duration.HumanDuration(d)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
