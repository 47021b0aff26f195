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

package top

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// NearStale is the share of staleAfter past which a heartbeat's age turns
// amber: the agent has a quarter of its allowance left.
const NearStale = 0.75

// MaxAlerts is how many of the newest Warning Events a frame lists.
const MaxAlerts = 8

// tone is what a cell's colour says.
type tone int

const (
	plain tone = iota
	// dim is for what no longer matters, such as a finished Hook's heartbeat.
	dim
	// amber warns: a heartbeat near staleAfter, crashes within the window.
	amber
	// red alarms: a stale heartbeat, a dead Worker, a Warning Event.
	red
)

var (
	titleStyle    = lipgloss.NewStyle().Bold(true)
	headerStyle   = lipgloss.NewStyle().Bold(true).Faint(true)
	selectedStyle = lipgloss.NewStyle().Reverse(true)
	toneStyles    = map[tone]lipgloss.Style{
		plain: lipgloss.NewStyle(),
		dim:   lipgloss.NewStyle().Faint(true),
		amber: lipgloss.NewStyle().Foreground(lipgloss.Color("214")),
		red:   lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true),
	}
)

// cell is one table cell and its colour.
type cell struct {
	text string
	tone tone
}

// frame is everything a frame is drawn from besides the objects.
type frame struct {
	now time.Time
	cfg *config.Config
	// namespace is the namespace watched; empty for every namespace.
	namespace string
	// nsFilter and stateFilter narrow the lists; empty shows everything.
	nsFilter    string
	stateFilter v1.HookState
	// selected is the index of the selected row among the Hooks, then the
	// Workers, as rows returns them; -1 for none.
	selected int
	// width and height bound the frame; 0 leaves it unbounded.
	width, height int
	// status is the line under the lists: an action's result or an error.
	status string
	// footer is the last line, the keys.
	footer string
}

// filtered returns the Hooks, Workers and Warning Events the filters keep.
func (f *frame) filtered(s Snapshot) Snapshot {
	var out Snapshot
	for i := range s.Hooks {
		h := &s.Hooks[i]
		if (f.nsFilter == "" || h.Namespace == f.nsFilter) && (f.stateFilter == "" || h.Status.State.OrInitializing() == f.stateFilter) {
			out.Hooks = append(out.Hooks, *h)
		}
	}
	for i := range s.Workers {
		if f.nsFilter == "" || s.Workers[i].Namespace == f.nsFilter {
			out.Workers = append(out.Workers, s.Workers[i])
		}
	}
	for i := range s.Warnings {
		if f.nsFilter == "" || s.Warnings[i].Namespace == f.nsFilter {
			out.Warnings = append(out.Warnings, s.Warnings[i])
		}
	}
	return out
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

// heartbeatCell is the age of h's last heartbeat: red once older than
// staleAfter, amber past NearStale of it, while an agent is expected to
// heartbeat (or the Hook is recovering, as the Stale condition counts it).
func heartbeatCell(h *v1.Hook, staleAfter time.Duration, now time.Time) cell {
	hb := h.Status.LastHeartbeat
	if hb == nil {
		return cell{text: "-"}
	}
	d := now.Sub(hb.Time)
	c := cell{text: age(d)}
	switch {
	case !hookfsm.HeartbeatExpected(h) && h.Status.State != v1.HookRecovering:
		c.tone = dim
	case d >= staleAfter:
		c.text, c.tone = c.text+" stale", red
	case float64(d) >= NearStale*float64(staleAfter):
		c.text, c.tone = c.text+" near stale", amber
	}
	return c
}

// hookCells is h's row: state, step k/n, attempt, assignee, heartbeat and
// last checkpoint.
func (f *frame) hookCells(h *v1.Hook) []cell {
	st := &h.Status
	state := cell{text: string(h.Status.State.OrInitializing())}
	switch h.Status.State.OrInitializing() {
	case v1.HookRecovering, v1.HookFailed:
		state.tone = red
	case v1.HookAwaitingHuman:
		state.tone = amber
	case v1.HookCompleted, v1.HookAbandoned:
		state.tone = dim
	}
	if h.Spec.Suspend {
		state.text += " (paused)"
	}
	if historyMismatch(h) {
		state.text, state.tone = state.text+" (history mismatch)", red
	}
	step, attempt := "-", "-"
	if cs := st.CurrentStep; cs != nil {
		step = fmt.Sprintf("%d/%d %s", cs.Index+1, len(h.Spec.Steps), cs.Name)
		attempt = strconv.Itoa(int(cs.Attempt))
	}
	checkpoint := "-"
	if lc := st.LastCheckpoint; lc != nil {
		checkpoint = fmt.Sprintf("%s %s %s", lc.Name, lc.Trigger, age(f.now.Sub(lc.Time.Time)))
	}
	cells := []cell{{text: h.Name}, state, {text: step}, {text: attempt}, {text: dash(h.Spec.Assignee)},
		heartbeatCell(h, f.cfg.Effective(&h.Spec).StaleAfter, f.now), {text: checkpoint}}
	if f.namespace == "" {
		cells = append([]cell{{text: h.Namespace}}, cells...)
	}
	return cells
}

// historyMismatch reports whether h's status disagrees with its history, as
// the HistoryConsistent condition says (tether get's HISTORY column reads
// the same condition): its state is not to be trusted.
func historyMismatch(h *v1.Hook) bool {
	c := meta.FindStatusCondition(h.Status.Conditions, v1.ConditionHistoryConsistent)
	return c != nil && c.Status == metav1.ConditionFalse
}

// workerCells is w's row: phase, PID or Pod, restarts, crashes in the
// window and uptime.
func (f *frame) workerCells(w *v1.Worker) []cell {
	st := &w.Status
	phase := cell{text: dash(string(st.Phase))}
	switch st.Phase {
	case v1.WorkerCrashLoop, v1.WorkerCrashed, v1.WorkerLost:
		phase.tone = red
	case v1.WorkerRestarting:
		phase.tone = amber
	case v1.WorkerStopped:
		phase.tone = dim
	}
	proc := "-"
	switch {
	case st.PID != 0:
		proc = strconv.Itoa(int(st.PID))
	case st.PodName != "":
		proc = st.PodName
	case w.Spec.Template != nil:
		proc = "pod"
	}
	n := workerfsm.CrashesInWindow(&w.Spec, st, f.now)
	crashes := cell{text: fmt.Sprintf("%d/%d in %s", n, workerfsm.MaxCrashes(&w.Spec), age(workerfsm.CrashWindow(&w.Spec)))}
	if n > 0 {
		crashes.tone = amber
	}
	uptime := "-"
	if st.Phase == v1.WorkerRunning && st.StartedAt != nil {
		uptime = age(f.now.Sub(st.StartedAt.Time))
	}
	cells := []cell{{text: w.Name}, phase, {text: proc}, {text: strconv.Itoa(int(st.Restarts))}, crashes, {text: uptime}}
	if f.namespace == "" {
		cells = append([]cell{{text: w.Namespace}}, cells...)
	}
	return cells
}

// alertCells is a Warning Event's row: its age, object, reason (with the
// count of a series) and message on one line.
func (f *frame) alertCells(e *corev1.Event) []cell {
	obj := strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name
	reason := e.Reason
	count := e.Count
	if e.Series != nil {
		count = e.Series.Count
	}
	if count > 1 {
		reason = fmt.Sprintf("%s (x%d)", reason, count)
	}
	msg := strings.Join(strings.Fields(e.Message), " ")
	cells := []cell{{text: age(f.now.Sub(EventTime(e)))}, {text: obj}, {text: reason, tone: red}, {text: msg}}
	if f.namespace == "" {
		cells = append([]cell{{text: e.Namespace}}, cells...)
	}
	return cells
}

// renderTable lays rows out under headers in columns two spaces apart, as
// kubectl does, highlighting row selected (-1 for none). A table wider
// than width (0: unbounded) has its widest columns cut, with an ellipsis.
func renderTable(headers []string, rows [][]cell, selected, width int) string {
	t := newTable(headers, rows, selected)
	out := t.String()
	if width > 0 && lipgloss.Width(out) > width {
		out = t.Width(width).Wrap(false).String()
	}
	return out
}

func newTable(headers []string, rows [][]cell, selected int) *table.Table {
	t := table.New().Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).
		Headers(headers...)
	for _, r := range rows {
		texts := make([]string, len(r))
		for i, c := range r {
			texts[i] = c.text
		}
		t.Row(texts...)
	}
	last := len(headers) - 1
	t.StyleFunc(func(row, col int) lipgloss.Style {
		var s lipgloss.Style
		switch row {
		case table.HeaderRow:
			s = headerStyle
		case selected:
			s = selectedStyle
		default:
			s = toneStyles[rows[row][col].tone]
		}
		if col < last {
			s = s.PaddingRight(2)
		}
		return s
	})
	return t
}

// window returns the first index and the count of n rows to show in at
// most limit lines (0: no limit), keeping row selected (-1: none) in view.
func window(n, limit, selected int) (int, int) {
	if limit <= 0 || n <= limit {
		return 0, n
	}
	first := 0
	if selected >= limit {
		first = selected - limit + 1
	}
	return first, limit
}

// render draws one frame of s.
func (f *frame) render(s Snapshot) string {
	s = f.filtered(s)
	var b strings.Builder
	where := "namespace " + f.namespace
	if f.namespace == "" {
		where = "all namespaces"
	}
	if f.nsFilter != "" && f.namespace == "" {
		where += ", showing " + f.nsFilter
	}
	if f.stateFilter != "" {
		where += ", state " + string(f.stateFilter)
	}
	alerts := len(s.Warnings)
	b.WriteString(titleStyle.Render("tether top") + fmt.Sprintf("  %s  hooks %d  workers %d  ", where, len(s.Hooks), len(s.Workers)))
	alertsText := fmt.Sprintf("alerts %d", alerts)
	if alerts > 0 {
		alertsText = toneStyles[red].Render(alertsText)
	}
	b.WriteString(alertsText + "\n")

	nsHeader := func(h []string) []string {
		if f.namespace == "" {
			return append([]string{"NAMESPACE"}, h...)
		}
		return h
	}
	hookRows := make([][]cell, len(s.Hooks))
	for i := range s.Hooks {
		hookRows[i] = f.hookCells(&s.Hooks[i])
	}
	workerRows := make([][]cell, len(s.Workers))
	for i := range s.Workers {
		workerRows[i] = f.workerCells(&s.Workers[i])
	}
	shown := s.Warnings
	if len(shown) > MaxAlerts {
		shown = shown[:MaxAlerts]
	}
	alertRows := make([][]cell, len(shown))
	for i := range shown {
		alertRows[i] = f.alertCells(&shown[i])
	}

	hookLimit, workerLimit := 0, 0
	if f.height > 0 {
		// Beside the Hooks and Workers: the header line, per section a
		// blank line, a title and a table header, a "more" line under each
		// list, the alerts, and the status and footer with their blank lines.
		fixed := 1 + 3*3 + 2 + len(alertRows)
		for _, s := range []string{f.status, f.footer} {
			if s != "" {
				fixed += 1 + lipgloss.Height(s)
			}
		}
		room := max(2, f.height-fixed)
		workerLimit = min(len(workerRows), max(1, room/3))
		hookLimit = max(1, room-workerLimit)
		if len(hookRows) < hookLimit {
			workerLimit = max(1, room-len(hookRows))
		}
	}
	section := func(title, empty string, headers []string, rows [][]cell, limit, selected int) {
		b.WriteString("\n" + titleStyle.Render(title) + "\n")
		if len(rows) == 0 {
			b.WriteString(toneStyles[dim].Render(empty) + "\n")
			return
		}
		first, count := window(len(rows), limit, selected)
		if selected >= 0 {
			selected -= first
		}
		b.WriteString(renderTable(headers, rows[first:first+count], selected, f.width) + "\n")
		if more := len(rows) - first - count; more > 0 {
			b.WriteString(toneStyles[dim].Render(fmt.Sprintf("... %d more", more)) + "\n")
		}
	}
	hookSel, workerSel := -1, -1
	switch {
	case f.selected >= 0 && f.selected < len(hookRows):
		hookSel = f.selected
	case f.selected >= len(hookRows):
		workerSel = f.selected - len(hookRows)
	}
	section("HOOKS", "No hooks.", nsHeader([]string{"NAME", "STATE", "STEP", "ATTEMPT", "ASSIGNEE", "HEARTBEAT", "CHECKPOINT"}), hookRows, hookLimit, hookSel)
	section("WORKERS", "No workers.", nsHeader([]string{"NAME", "PHASE", "PID/POD", "RESTARTS", "CRASHES", "UPTIME"}), workerRows, workerLimit, workerSel)
	section("ALERTS", "No warnings.", nsHeader([]string{"AGE", "OBJECT", "REASON", "MESSAGE"}), alertRows, 0, -1)
	if f.status != "" {
		b.WriteString("\n" + f.status + "\n")
	}
	if f.footer != "" {
		b.WriteString("\n" + f.footer + "\n")
	}
	out := b.String()
	if f.width > 0 {
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			lines[i] = ansi.Truncate(l, f.width, "…")
		}
		out = strings.Join(lines, "\n")
	}
	return out
}

// Plain is a frame without colour or trailing blanks, for --once and pipes.
func Plain(frame string) string {
	lines := strings.Split(ansi.Strip(frame), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
