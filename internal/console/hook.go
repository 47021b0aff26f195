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
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

// gitTimeout bounds the git commands behind a page: the live files of the
// recovery file and a checkpoint's diff.
const gitTimeout = 10 * time.Second

// maxDiff is the most of a diff a page shows.
const maxDiff = 2 << 20

type stepView struct {
	Index       int
	Name        string
	Description string
	Phase       string
	Tone        string
	Current     bool
	Attempts    int32
	Completed   string
	Validate    []string
	Verdict     string
	VerdictTone string
	Notes       []string
	Receipts    []receiptView
	Files       []string
}

type receiptView struct {
	Command  string
	ExitCode int32
	Attempt  int32
	Duration string
	Finished string
	Status   string
	Tone     string
}

type historyView struct {
	Time, Event, From, To, Actor, Message string
	// Step is the step's position, from 1.
	Step    int
	Attempt int32
	Tone    string
}

type checkpointView struct {
	Name, Trigger, Step, State, Time, Description, Commit string
	Seq                                                   int64
	Files                                                 int
	PreviousURL                                           string
	WorkspaceURL                                          string
}

type eventView struct {
	Time, Type, Reason, Message, Source string
	Count                               int32
	Tone                                string
}

type hookData struct {
	Namespace, Name string
	State, Tone     string
	Badges          []string
	Goal            string
	Workspace       string
	Assignee        string
	AssigneeURL     string
	NextAction      string
	Heartbeat       string
	WorkingOn       string
	CurrentFiles    []string
	Steps           []stepView
	KeyNote         string
	History         []historyView
	HistoryDropped  int64
	Checkpoints     []checkpointView
	Events          []eventView
	Session         [][2]string
	Recovery        string
	Timeline        *chart
}

func (h *Handler) getHook(ctx context.Context, r *http.Request) (*v1.Hook, error) {
	hk := &v1.Hook{}
	err := h.o.APIReader.Get(ctx, client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}, hk)
	return hk, err
}

func (h *Handler) hook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	hk, err := h.getHook(ctx, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cps, err := recoveryfile.HookCheckpoints(ctx, h.o.Reader, hk)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.wholeCheckpoints(ctx, cps)
	sortCheckpoints(cps)
	events, err := eventsAbout(ctx, h.o.Reader, "Hook", hk)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	report := h.evidence(ctx)(hk)
	now := h.o.Now()
	row := hookRowOf(hk, now, h.staleAfter(hk), false)
	d := &hookData{Namespace: hk.Namespace, Name: hk.Name, State: row.State, Tone: row.Tone, Badges: row.Badges,
		Goal: hk.Spec.Goal, Workspace: dash(hk.Spec.Workspace), Assignee: row.Assignee, AssigneeURL: row.AssigneeURL,
		NextAction: hookfsm.NextAction(hk), Heartbeat: row.Heartbeat, HistoryDropped: hk.Status.HistoryDropped}
	if cs := hk.Status.CurrentStep; cs != nil {
		d.WorkingOn, d.CurrentFiles = cs.WorkingOn, cs.FilesTouched
	}
	d.Steps, d.KeyNote = stepViews(hk, report)
	for i := len(hk.Status.History) - 1; i >= 0; i-- {
		e := &hk.Status.History[i]
		d.History = append(d.History, historyView{Time: stamp(e.Time.Time), Event: e.Event, From: string(e.From), To: string(e.To),
			Actor: dash(e.Actor), Message: e.Message, Step: int(e.Step) + 1, Attempt: e.Attempt, Tone: stateTone(e.To)})
	}
	for i := len(cps) - 1; i >= 0; i-- {
		cp := &cps[i]
		v := checkpointView{Name: cp.Name, Trigger: string(cp.Spec.Trigger), Step: dash(cp.Spec.Step), State: dash(string(cp.Spec.State)),
			Time: stamp(cp.CreationTimestamp.Time), Description: cp.Spec.Description, Seq: cp.Spec.Seq, Files: len(cp.Spec.Files)}
		if g := cp.Spec.Git; g != nil && g.SnapshotCommit != "" {
			v.Commit = g.SnapshotShort
			if v.Commit == "" {
				v.Commit = g.SnapshotCommit[:min(12, len(g.SnapshotCommit))]
			}
			base := hookURL(hk.Namespace, hk.Name) + "/diff/" + url.PathEscape(cp.Name)
			v.WorkspaceURL = base + "?against=workspace"
			if i > 0 {
				v.PreviousURL = base + "?against=previous"
			}
		}
		d.Checkpoints = append(d.Checkpoints, v)
	}
	for i := range events {
		d.Events = append(d.Events, eventViewOf(&events[i]))
	}
	d.Session = sessionRows(hk.Status.AgentSession)
	d.Recovery = h.recoveryText(ctx, hk, cps)
	d.Timeline = hookTimeline(hk, cps, now)
	h.render(w, r, "hook", page{Title: hk.Namespace + "/" + hk.Name, Live: h.o.Watcher != nil, Body: d})
}

// evidence verifies receipts with the console's keys, or checks all but
// the signatures without them.
func (h *Handler) evidence(ctx context.Context) recoveryfile.Evidence {
	if h.o.Keys == nil {
		return recoveryfile.NoKeyEvidence
	}
	return receipts.EvidenceFunc(ctx, h.o.Keys)
}

// recoveryText is hk's recovery file as the agent receives it: the text
// `tether recover` prints, with the live files from git when the
// workspace is on this host.
func (h *Handler) recoveryText(ctx context.Context, hk *v1.Hook, cps []v1.Checkpoint) string {
	opts := recoveryfile.Options{Evidence: h.evidence(ctx), Checkpoints: recoveryfile.Summarize(hk, cps)}
	if err := recoveryfile.LiveChanges(ctx, hk, &opts, gitTimeout); err != nil {
		h.o.Log.V(1).Info("console: live changes", "hook", hk.Namespace+"/"+hk.Name, "error", err.Error())
	}
	return string(recoveryfile.Render(hk, opts))
}

// sortCheckpoints orders cps oldest first, by seq then creation.
func sortCheckpoints(cps []v1.Checkpoint) {
	slices.SortStableFunc(cps, func(a, b v1.Checkpoint) int {
		if a.Spec.Seq != b.Spec.Seq {
			return int(a.Spec.Seq - b.Spec.Seq)
		}
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
}

func stepViews(hk *v1.Hook, report *receipts.Report) ([]stepView, string) {
	results := map[string]*v1.StepResult{}
	for i := range hk.Status.Steps {
		results[hk.Status.Steps[i].Name] = &hk.Status.Steps[i]
	}
	reports := map[string]*receipts.StepReport{}
	keyNote := ""
	var keyErr error
	if report != nil {
		keyErr = report.KeyErr
		for i := range report.Steps {
			reports[report.Steps[i].Name] = &report.Steps[i]
		}
		if keyErr != nil {
			keyNote = "signatures not checked: " + keyErr.Error()
		}
	}
	var out []stepView
	for i, s := range hk.Spec.Steps {
		v := stepView{Index: i + 1, Name: s.Name, Description: s.Description, Phase: string(v1.StepPending)}
		for _, c := range s.Validate {
			v.Validate = append(v.Validate, strings.Join(c.Command, " "))
		}
		if cs := hk.Status.CurrentStep; cs != nil && int(cs.Index) == i {
			v.Current = true
		}
		if res := results[s.Name]; res != nil {
			v.Phase, v.Attempts, v.Files = string(res.Phase), res.Attempts, res.FilesTouched
			if res.CompletedAt != nil {
				v.Completed = stamp(res.CompletedAt.Time)
			}
		}
		switch v1.StepPhase(v.Phase) {
		case v1.StepPassed:
			v.Tone = "green"
		case v1.StepFailed:
			v.Tone = "red"
		case v1.StepRunning, v1.StepValidating:
			v.Tone = "amber"
		}
		if rep := reports[s.Name]; rep != nil {
			v.Verdict, v.Notes = rep.Describe(), rep.Notes
			switch rep.Verdict {
			case receipts.VerdictVerified:
				v.VerdictTone = "green"
			case receipts.VerdictInvalid:
				v.VerdictTone = "red"
			case receipts.VerdictUnverified:
				v.VerdictTone = "amber"
			}
			for j := range rep.Receipts {
				rr := &rep.Receipts[j]
				rc := rr.Receipt
				rv := receiptView{Command: strings.Join(rc.Command, " "), ExitCode: rc.ExitCode, Attempt: rc.Attempt,
					Duration: (time.Duration(rc.DurationMillis) * time.Millisecond).String(), Finished: stamp(rc.FinishedAt.Time),
					Status: rr.Status(keyErr)}
				switch {
				case rv.Status == "verified":
					rv.Tone = "green"
				case rr.Err != nil:
					rv.Tone = "red"
				default:
					rv.Tone = "amber"
				}
				v.Receipts = append(v.Receipts, rv)
			}
		}
		out = append(out, v)
	}
	return out, keyNote
}

// eventsAbout lists the Events about obj of kind, newest first, matched
// by UID when the Event records one (as tether describe does).
func eventsAbout(ctx context.Context, c client.Reader, kind string, obj client.Object) ([]corev1.Event, error) {
	list := &corev1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, e := range list.Items {
		ref := e.InvolvedObject
		if ref.Kind != kind || ref.Name != obj.GetName() || ref.UID != "" && ref.UID != obj.GetUID() {
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b corev1.Event) int { return eventTime(&b).Compare(eventTime(&a)) })
	return out, nil
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func eventViewOf(e *corev1.Event) eventView {
	count := e.Count
	if e.Series != nil {
		count = e.Series.Count
	}
	source := e.ReportingController
	if source == "" {
		source = e.Source.Component
	}
	v := eventView{Time: stamp(eventTime(e)), Type: e.Type, Reason: e.Reason, Message: e.Message, Source: dash(source), Count: max(count, 1)}
	if e.Type == corev1.EventTypeWarning {
		v.Tone = "red"
	}
	return v
}

func sessionRows(a *v1.AgentSession) [][2]string {
	if a == nil {
		return nil
	}
	rows := [][2]string{{"Session", a.SessionID}, {"Agent", strings.TrimSpace(a.Agent + " " + a.AgentVersion)}, {"Source", string(a.Source)}}
	if a.ResumedFrom != "" {
		rows = append(rows, [2]string{"Resumed from", a.ResumedFrom})
	}
	if a.TranscriptPath != "" {
		rows = append(rows, [2]string{"Transcript", a.TranscriptPath})
	}
	if a.StartedAt != nil {
		rows = append(rows, [2]string{"Started", stamp(a.StartedAt.Time)})
	}
	if a.LastSeen != nil {
		rows = append(rows, [2]string{"Last seen", stamp(a.LastSeen.Time)})
	}
	if a.EndedAt != nil {
		rows = append(rows, [2]string{"Ended", fmt.Sprintf("%s (%s, in %s %s)", stamp(a.EndedAt.Time), a.EndReason, a.EndedInState, a.EndedInStep)})
	}
	rows = append(rows, [2]string{"Compactions", fmt.Sprint(a.Compactions)}, [2]string{"Continuations", fmt.Sprint(a.Continuations)})
	return rows
}

type diffData struct {
	Namespace, Name, HookURL string
	Checkpoint               string
	Against                  string
	Title                    string
	Stat                     []diffLine
	Patch                    []diffLine
	Truncated                bool
	Empty                    bool
	Problem                  string
}

type diffLine struct {
	Text, Class string
}

// diff shows what changed from a checkpoint to the one before it
// (?against=previous) or to the workspace now (?against=workspace): the
// content of `tether checkpoint diff`, from the same function.
func (h *Handler) diff(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	hk, err := h.getHook(ctx, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cps, err := recoveryfile.HookCheckpoints(ctx, h.o.Reader, hk)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sortCheckpoints(cps)
	name := r.PathValue("checkpoint")
	at := slices.IndexFunc(cps, func(cp v1.Checkpoint) bool { return cp.Name == name })
	if at < 0 {
		w.WriteHeader(http.StatusNotFound)
		h.render(w, r, "error", page{Title: "Not Found", Body: struct{ Message string }{fmt.Sprintf("hook %s has no checkpoint %q", hk.Name, name)}})
		return
	}
	against := r.URL.Query().Get("against")
	d := &diffData{Namespace: hk.Namespace, Name: hk.Name, HookURL: hookURL(hk.Namespace, hk.Name), Checkpoint: name, Against: against}
	cp := &cps[at]
	var from string
	var opts snapshot.DiffOptions
	switch against {
	case "previous":
		if at == 0 {
			d.Problem = "this is the Hook's first checkpoint: there is none before it"
			break
		}
		prev := &cps[at-1]
		d.Title = fmt.Sprintf("%s → %s", prev.Name, cp.Name)
		from, opts.To = commitOf(prev), commitOf(cp)
		if from == "" || opts.To == "" {
			d.Problem = "one of the checkpoints has no snapshot commit (spec.git.snapshotCommit)"
		}
	case "workspace", "":
		d.Against = "workspace"
		d.Title = fmt.Sprintf("%s → the workspace now", cp.Name)
		from = commitOf(cp)
		if from == "" {
			d.Problem = fmt.Sprintf("checkpoint %q has no snapshot commit (spec.git.snapshotCommit)", cp.Name)
		}
	default:
		w.WriteHeader(http.StatusBadRequest)
		h.render(w, r, "error", page{Title: "Bad Request", Body: struct{ Message string }{fmt.Sprintf("against=%q: want previous or workspace", against)}})
		return
	}
	if d.Problem == "" {
		d.Problem = h.runDiff(ctx, hk, from, opts, d)
	}
	h.render(w, r, "diff", page{Title: "diff " + d.Title, Body: d})
}

func commitOf(cp *v1.Checkpoint) string {
	if cp.Spec.Git == nil {
		return ""
	}
	return cp.Spec.Git.SnapshotCommit
}

// runDiff fills d with snapshot.Diff's summary and patch, or returns why
// it cannot.
func (h *Handler) runDiff(ctx context.Context, hk *v1.Hook, from string, opts snapshot.DiffOptions, d *diffData) string {
	ws := hk.Spec.Workspace
	if ws == "" {
		return "the Hook names no workspace (spec.workspace)"
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return fmt.Sprintf("the workspace %s is not a directory on this host: the diff is computed from its git repository", ws)
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	var stat, patch bytes.Buffer
	if err := snapshot.Diff(ctx, ws, from, &stat, opts); err != nil {
		return diffProblem(err)
	}
	opts.Patch = true
	if err := snapshot.Diff(ctx, ws, from, &limitWriter{w: &patch, n: maxDiff, cut: &d.Truncated}, opts); err != nil {
		return diffProblem(err)
	}
	d.Stat, d.Patch = diffLines(stat.String()), diffLines(patch.String())
	d.Empty = stat.Len() == 0
	return ""
}

func diffProblem(err error) string {
	if errors.Is(err, snapshot.ErrCommitMissing) {
		return "the snapshot commit is not in the workspace's repository: " + err.Error()
	}
	return err.Error()
}

func diffLines(s string) []diffLine {
	if s == "" {
		return nil
	}
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "), strings.HasPrefix(l, "index "):
			c = "meta"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		}
		out = append(out, diffLine{Text: l, Class: c})
	}
	return out
}

// limitWriter keeps the first n bytes and records that it cut.
type limitWriter struct {
	w   *bytes.Buffer
	n   int
	cut *bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); len(p) > room {
		l.w.Write(p[:max(room, 0)])
		*l.cut = true
		return len(p), nil
	}
	return l.w.Write(p)
}

// stamp is t in UTC, to the second.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// recovering tells whether hk is in recovery, by state or condition.
func recovering(hk *v1.Hook) bool {
	return hk.Status.State == v1.HookRecovering || meta.IsStatusConditionTrue(hk.Status.Conditions, v1.ConditionRecovering)
}

// wholeCheckpoints replaces cps, read from Reader, with the objects as
// stored, read through the API reader when it is another reader: the
// cache of tether run holds Checkpoints trimmed of what only a person
// reads (the files, the short commit). A Checkpoint deleted meanwhile
// keeps the copy read first.
func (h *Handler) wholeCheckpoints(ctx context.Context, cps []v1.Checkpoint) {
	if h.o.APIReader == h.o.Reader {
		return
	}
	for i := range cps {
		whole := &v1.Checkpoint{}
		if err := h.o.APIReader.Get(ctx, client.ObjectKeyFromObject(&cps[i]), whole); err == nil {
			cps[i] = *whole
		}
	}
}
