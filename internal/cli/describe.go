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

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/describe"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tetherv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/pause"
)

// historyShown is how many of a Hook's newest history entries describe shows.
const historyShown = 10

func newDescribeCommand(g *GlobalOptions) *cobra.Command {
	var showEvents bool
	cmd := &cobra.Command{
		Use:   "describe TYPE [NAME...] | TYPE/NAME...",
		Short: "Show the details of objects, with their Events",
		Long: `Show the details of objects in readable sections, as kubectl describe does:
a Hook's spec, state, current step, step results, recovery, conditions,
history and checkpoints; a Worker's process, restart policy and crash
records; a Checkpoint's git state and files. The object's Events come last.
Without a NAME every object of the type is described.`,
		Example: `  tether describe hook fix-login
  tether describe wk/agent-1`,
		ValidArgsFunction: completeTypesAndNames(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForReading()
			return runDescribe(cmd.Context(), g, cmd.OutOrStdout(), args, showEvents)
		},
	}
	cmd.Flags().BoolVar(&showEvents, "show-events", true, "show the object's Events")
	return cmd
}

func runDescribe(ctx context.Context, g *GlobalOptions, out io.Writer, args []string, showEvents bool) error {
	b, err := g.ReadBackend(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	cfg, err := config.Load(g.ConfigFile)
	if err != nil {
		return err
	}
	targets, err := b.Types.ParseTargets(args)
	if err != nil {
		return err
	}
	var errs []error
	first := true
	for _, t := range targets {
		var objs []*unstructured.Unstructured
		if len(t.Names) == 0 {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(t.Type.GVK.GroupVersion().WithKind(t.Type.GVK.Kind + "List"))
			if err := b.Client.List(ctx, list, client.InNamespace(b.Namespace)); err != nil {
				errs = append(errs, err)
				continue
			}
			for i := range list.Items {
				objs = append(objs, &list.Items[i])
			}
		}
		for _, name := range t.Names {
			u, err := getObject(ctx, b, t.Type, b.Namespace, name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			objs = append(objs, u)
		}
		for _, u := range objs {
			text, err := Describe(ctx, b, cfg, t.Type, u, showEvents)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !first {
				fmt.Fprint(out, "\n\n")
			}
			first = false
			fmt.Fprint(out, text)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// Describe renders one object for people, with its Events when showEvents.
// cfg supplies the defaults a Hook's spec leaves unset; nil means the
// built-in ones.
func Describe(ctx context.Context, b *Backend, cfg *config.Config, rt ResourceType, u *unstructured.Unstructured, showEvents bool) (string, error) {
	var events *corev1.EventList
	if showEvents {
		var err error
		if events, err = eventsFor(ctx, b, u); err != nil {
			return "", err
		}
	}
	buf := &bytes.Buffer{}
	tw := printers.GetNewTabWriter(buf)
	w := describe.NewPrefixWriter(tw)
	describeMeta(w, u)
	var err error
	switch rt.GVK.GroupKind() {
	case tetherv1alpha1.GroupVersion.WithKind("Hook").GroupKind():
		h := &tetherv1alpha1.Hook{}
		if err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, h); err == nil {
			// The local store records it relative to its directory.
			h.Status.RecoveryFile = b.LocalPath(h.Status.RecoveryFile)
			var cps []tetherv1alpha1.Checkpoint
			if cps, err = checkpointsOf(ctx, b, h); err == nil {
				describeHook(w, h, cps, cfg)
			}
		}
	case tetherv1alpha1.GroupVersion.WithKind("Worker").GroupKind():
		wk := &tetherv1alpha1.Worker{}
		if err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, wk); err == nil {
			describeWorker(w, wk)
		}
	case tetherv1alpha1.GroupVersion.WithKind("Checkpoint").GroupKind():
		cp := &tetherv1alpha1.Checkpoint{}
		if err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cp); err == nil {
			describeCheckpoint(w, cp)
		}
	default:
		e := &corev1.Event{}
		if err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, e); err == nil {
			describeEvent(w, e)
		}
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", rt.Qualified(), u.GetName(), err)
	}
	if events != nil {
		describe.DescribeEvents(events, w)
	}
	w.Flush()
	if err := tw.Flush(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// eventsFor lists the Events about u, matched by UID when the Event
// records one (a recreated object of the same name has other Events).
func eventsFor(ctx context.Context, b *Backend, u *unstructured.Unstructured) (*corev1.EventList, error) {
	list := &corev1.EventList{}
	if err := b.Client.List(ctx, list, client.InNamespace(u.GetNamespace())); err != nil {
		return nil, err
	}
	out := &corev1.EventList{}
	for _, e := range list.Items {
		ref := e.InvolvedObject
		if ref.Kind != u.GetKind() || ref.Name != u.GetName() || ref.UID != "" && ref.UID != u.GetUID() {
			continue
		}
		out.Items = append(out.Items, e)
	}
	return out, nil
}

func checkpointsOf(ctx context.Context, b *Backend, h *tetherv1alpha1.Hook) ([]tetherv1alpha1.Checkpoint, error) {
	list := &tetherv1alpha1.CheckpointList{}
	if err := b.Client.List(ctx, list, client.InNamespace(h.Namespace)); err != nil {
		return nil, err
	}
	var out []tetherv1alpha1.Checkpoint
	for _, cp := range list.Items {
		if cp.Spec.HookName == h.Name {
			out = append(out, cp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp)
	})
	return out, nil
}

func describeMeta(w describe.PrefixWriter, u *unstructured.Unstructured) {
	w.Write(describe.LEVEL_0, "Name:\t%s\n", u.GetName())
	if u.GetNamespace() != "" {
		w.Write(describe.LEVEL_0, "Namespace:\t%s\n", u.GetNamespace())
	}
	writeMap(w, "Labels", u.GetLabels())
	writeMap(w, "Annotations", u.GetAnnotations())
	w.Write(describe.LEVEL_0, "API Version:\t%s\n", u.GetAPIVersion())
	w.Write(describe.LEVEL_0, "Kind:\t%s\n", u.GetKind())
	w.Write(describe.LEVEL_0, "Created:\t%s\n", timeAndAge(u.GetCreationTimestamp()))
	if ts := u.GetDeletionTimestamp(); ts != nil {
		w.Write(describe.LEVEL_0, "Deleting Since:\t%s\n", timeAndAge(*ts))
	}
	if f := u.GetFinalizers(); len(f) > 0 {
		w.Write(describe.LEVEL_0, "Finalizers:\t%s\n", strings.Join(f, ", "))
	}
	for _, ref := range u.GetOwnerReferences() {
		w.Write(describe.LEVEL_0, "Owned By:\t%s/%s\n", ref.Kind, ref.Name)
	}
}

func writeMap(w describe.PrefixWriter, title string, m map[string]string) {
	if len(m) == 0 {
		w.Write(describe.LEVEL_0, "%s:\t<none>\n", title)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == 0 {
			w.Write(describe.LEVEL_0, "%s:\t%s=%s\n", title, k, m[k])
			continue
		}
		w.Write(describe.LEVEL_0, "\t%s=%s\n", k, m[k])
	}
}

func timeAndAge(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), since(t.Time))
}

func timePtr(t *metav1.Time) string {
	if t == nil {
		return "<none>"
	}
	return timeAndAge(*t)
}

func microTimePtr(t *metav1.MicroTime) string {
	if t == nil {
		return "<none>"
	}
	return timeAndAge(metav1.NewTime(t.Time))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func durationOr(d *metav1.Duration, def string) string {
	if d == nil {
		return def
	}
	return d.Duration.String()
}

// describeStepFiles lists the files each passed step changed, one step a
// line, paths quoted when they hold a control character.
func describeStepFiles(w describe.PrefixWriter, steps []tetherv1alpha1.Step, results map[string]*tetherv1alpha1.StepResult) {
	var lines []string
	for i, step := range steps {
		r := results[step.Name]
		if r == nil || r.Phase != tetherv1alpha1.StepPassed || len(r.FilesTouched) == 0 {
			continue
		}
		lines = append(lines, fmt.Sprintf("%d %s:\t%s\n", i+1, step.Name, strings.Join(quoteAll(r.FilesTouched), ", ")))
	}
	if len(lines) == 0 {
		return
	}
	w.Write(describe.LEVEL_0, "Files Changed By Passed Steps:\n")
	for _, l := range lines {
		w.Write(describe.LEVEL_1, "%s", l)
	}
}

// quoteAll is paths as quoteIfNeeded.
func quoteAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = quoteIfNeeded(p)
	}
	return out
}

func describeHook(w describe.PrefixWriter, h *tetherv1alpha1.Hook, cps []tetherv1alpha1.Checkpoint, cfg *config.Config) {
	s, st := &h.Spec, &h.Status
	w.Write(describe.LEVEL_0, "Spec:\n")
	w.Write(describe.LEVEL_1, "Goal:\t%s\n", s.Goal)
	w.Write(describe.LEVEL_1, "Workspace:\t%s\n", orNone(s.Workspace))
	w.Write(describe.LEVEL_1, "Assignee:\t%s\n", orNone(s.Assignee))
	w.Write(describe.LEVEL_1, "Suspend:\t%t\n", s.Suspend)
	if s.Suspend {
		w.Write(describe.LEVEL_1, "Pause Reason:\t%s\n", orNone(pause.Reason(h)))
	}
	w.Write(describe.LEVEL_1, "Max Attempts:\t%d\n", s.MaxAttempts)
	writeDefaults(w, s, cfg)
	w.Write(describe.LEVEL_0, "Status:\n")
	state := st.State
	if state == "" {
		state = tetherv1alpha1.HookInitializing
	}
	w.Write(describe.LEVEL_1, "State:\t%s\n", state)
	if cs := st.CurrentStep; cs != nil {
		w.Write(describe.LEVEL_1, "Current Step:\t%s (%d/%d, attempt %d)\n", cs.Name, cs.Index+1, len(s.Steps), cs.Attempt)
		w.Write(describe.LEVEL_2, "Working On:\t%s\n", orNone(cs.WorkingOn))
		w.Write(describe.LEVEL_2, "Files Touched:\t%s\n", orNone(strings.Join(quoteAll(cs.FilesTouched), ", ")))
		w.Write(describe.LEVEL_2, "Started:\t%s\n", timePtr(cs.StartedAt))
	} else {
		w.Write(describe.LEVEL_1, "Current Step:\t<none>\n")
	}
	w.Write(describe.LEVEL_1, "Last Heartbeat:\t%s\n", microTimePtr(st.LastHeartbeat))
	if st.TerminalAt != nil {
		w.Write(describe.LEVEL_1, "Terminal Since:\t%s\n", timePtr(st.TerminalAt))
	}
	w.Write(describe.LEVEL_1, "Recovery File:\t%s\n", orNone(st.RecoveryFile))
	if r := st.Recovery; r != nil {
		w.Write(describe.LEVEL_1, "Recovery:\n")
		w.Write(describe.LEVEL_2, "Crash Type:\t%s\n", r.CrashType)
		w.Write(describe.LEVEL_2, "Detected:\t%s\n", timeAndAge(r.DetectedAt))
		w.Write(describe.LEVEL_2, "Last State:\t%s\n", r.LastState)
		w.Write(describe.LEVEL_2, "Recommended Action:\t%s\n", r.RecommendedAction)
		w.Write(describe.LEVEL_2, "Last Checkpoint:\t%s\n", orNone(r.LastCheckpoint))
		w.Write(describe.LEVEL_2, "Files Changed Since:\t%s\n", orNone(strings.Join(r.FilesChangedSinceCheckpoint, ", ")))
	}
	describeAgentSession(w, st.AgentSession)

	results := map[string]*tetherv1alpha1.StepResult{}
	for i := range st.Steps {
		results[st.Steps[i].Name] = &st.Steps[i]
	}
	if len(s.Steps) == 0 {
		w.Write(describe.LEVEL_0, "Steps:\t<none>\n")
	} else {
		w.Write(describe.LEVEL_0, "Steps:\n  #\tName\tPhase\tAttempts\tCompleted\tReceipts\tValidate\n")
		w.Write(describe.LEVEL_1, "-\t----\t-----\t--------\t---------\t--------\t--------\n")
		for i, step := range s.Steps {
			phase, attempts, completed, receipts := "Pending", int32(0), "<none>", 0
			if r := results[step.Name]; r != nil {
				phase, attempts, receipts = string(r.Phase), r.Attempts, len(r.Receipts)
				if r.CompletedAt != nil {
					completed = since(r.CompletedAt.Time) + " ago"
				}
			}
			var cmds []string
			for _, v := range step.Validate {
				cmds = append(cmds, strings.Join(v.Command, " "))
			}
			w.Write(describe.LEVEL_1, "%d\t%s\t%s\t%d\t%s\t%d\t%s\n", i+1, step.Name, phase, attempts, completed, receipts, orNone(strings.Join(cmds, "; ")))
		}
		describeStepFiles(w, s.Steps, results)
	}
	describeConditions(w, st.Conditions)
	if len(st.History) == 0 {
		w.Write(describe.LEVEL_0, "History:\t<none>\n")
	} else {
		hist := st.History
		title := "History:\n"
		if len(hist) > historyShown || st.HistoryDropped > 0 {
			title = fmt.Sprintf("History (newest %d of %d):\n", min(len(hist), historyShown), int64(len(hist))+st.HistoryDropped)
			hist = hist[max(0, len(hist)-historyShown):]
		}
		w.Write(describe.LEVEL_0, title)
		w.Write(describe.LEVEL_1, "Time\tEvent\tFrom\tTo\tStep\tAttempt\tActor\n")
		w.Write(describe.LEVEL_1, "----\t-----\t----\t--\t----\t-------\t-----\n")
		for _, e := range hist {
			step, attempt := "-", "-"
			if e.Attempt > 0 {
				step, attempt = fmt.Sprint(e.Step+1), fmt.Sprint(e.Attempt)
			}
			w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.UTC().Format(time.RFC3339), e.Event, orNone(string(e.From)), e.To, step, attempt, orNone(e.Actor))
		}
	}
	if len(cps) == 0 {
		w.Write(describe.LEVEL_0, "Checkpoints:\t<none>\n")
	} else {
		w.Write(describe.LEVEL_0, "Checkpoints:\n  Name\tTrigger\tStep\tCommit\tAge\tDescription\n")
		w.Write(describe.LEVEL_1, "----\t-------\t----\t------\t---\t-----------\n")
		for _, cp := range cps {
			commit := "<none>"
			if cp.Spec.Git != nil && cp.Spec.Git.Commit != "" {
				commit = cp.Spec.Git.Commit[:min(12, len(cp.Spec.Git.Commit))]
			}
			w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%s\t%s\t%s\n", cp.Name, cp.Spec.Trigger, orNone(cp.Spec.Step), commit, since(cp.CreationTimestamp.Time), orNone(cp.Spec.Description))
		}
	}
}

// describeAgentSession shows the agent session holding the Hook and its
// Stop loop counters.
func describeAgentSession(w describe.PrefixWriter, a *tetherv1alpha1.AgentSession) {
	if a == nil {
		w.Write(describe.LEVEL_1, "Agent Session:\t<none>\n")
		return
	}
	w.Write(describe.LEVEL_1, "Agent Session:\n")
	w.Write(describe.LEVEL_2, "Session ID:\t%s\n", a.SessionID)
	if a.Agent != "" {
		agent := a.Agent
		if a.AgentVersion != "" {
			agent += " " + a.AgentVersion
		}
		w.Write(describe.LEVEL_2, "Agent:\t%s\n", agent)
	}
	w.Write(describe.LEVEL_2, "Source:\t%s\n", orNone(string(a.Source)))
	if a.ResumedFrom != "" {
		w.Write(describe.LEVEL_2, "Resumed From:\t%s\n", a.ResumedFrom)
	}
	w.Write(describe.LEVEL_2, "Transcript:\t%s\n", orNone(a.TranscriptPath))
	w.Write(describe.LEVEL_2, "Started:\t%s\n", timePtr(a.StartedAt))
	w.Write(describe.LEVEL_2, "Last Seen:\t%s\n", microTimePtr(a.LastSeen))
	if a.EndedAt != nil {
		ended := fmt.Sprintf("%s, %s", timePtr(a.EndedAt), orNone(a.EndReason))
		if a.EndedInStep != "" {
			ended += fmt.Sprintf(", during step %s (%s)", a.EndedInStep, a.EndedInState)
		}
		w.Write(describe.LEVEL_2, "Ended:\t%s\n", ended)
	}
	if a.Compactions > 0 {
		w.Write(describe.LEVEL_2, "Compactions:\t%d (last %s)\n", a.Compactions, timePtr(a.LastCompactedAt))
	}
	w.Write(describe.LEVEL_2, "Continuations:\t%d in a row, %d for the Hook\n", a.Continuations, a.HookContinuations)
}

func describeWorker(w describe.PrefixWriter, wk *tetherv1alpha1.Worker) {
	s, st := &wk.Spec, &wk.Status
	w.Write(describe.LEVEL_0, "Spec:\n")
	switch {
	case s.Adopt != nil:
		w.Write(describe.LEVEL_1, "Adopt PID:\t%d\n", s.Adopt.PID)
	case s.Template != nil:
		w.Write(describe.LEVEL_1, "Pod Template:\t%d container(s)\n", len(s.Template.Spec.Containers))
	default:
		w.Write(describe.LEVEL_1, "Command:\t%s\n", orNone(strings.Join(s.Command, " ")))
	}
	w.Write(describe.LEVEL_1, "Workdir:\t%s\n", orNone(s.Workdir))
	if len(s.Env) == 0 {
		w.Write(describe.LEVEL_1, "Env:\t<none>\n")
	}
	for i, e := range s.Env {
		title := "Env:"
		if i > 0 {
			title = ""
		}
		w.Write(describe.LEVEL_1, "%s\t%s=%s\n", title, e.Name, e.Value)
	}
	if s.Tmux != nil {
		w.Write(describe.LEVEL_1, "Tmux Session:\t%s\n", orNone(s.Tmux.Session))
	}
	w.Write(describe.LEVEL_1, "Restart:\n")
	w.Write(describe.LEVEL_2, "Auto:\t%t\n", s.Restart.Auto)
	w.Write(describe.LEVEL_2, "Max Crashes:\t%d\n", s.Restart.MaxCrashes)
	w.Write(describe.LEVEL_2, "Window:\t%s\n", durationOr(s.Restart.Window, "<unset>"))
	if s.ClearAssigneeOnCrash != nil {
		w.Write(describe.LEVEL_1, "Clear Assignee On Crash:\t%t\n", *s.ClearAssigneeOnCrash)
	}
	w.Write(describe.LEVEL_0, "Status:\n")
	w.Write(describe.LEVEL_1, "Phase:\t%s\n", orNone(string(st.Phase)))
	if st.PID != 0 {
		w.Write(describe.LEVEL_1, "PID:\t%d\n", st.PID)
	} else {
		w.Write(describe.LEVEL_1, "PID:\t<none>\n")
	}
	w.Write(describe.LEVEL_1, "Host:\t%s\n", orNone(st.Host))
	w.Write(describe.LEVEL_1, "Started:\t%s\n", timePtr(st.StartedAt))
	w.Write(describe.LEVEL_1, "Restarts:\t%d\n", st.Restarts)
	w.Write(describe.LEVEL_1, "Last Heartbeat:\t%s\n", microTimePtr(st.LastHeartbeat))
	w.Write(describe.LEVEL_1, "Log File:\t%s\n", orNone(st.LogFile))
	if st.TmuxSession != "" {
		w.Write(describe.LEVEL_1, "Tmux Session:\t%s\n", st.TmuxSession)
	}
	if len(st.Crashes) == 0 {
		w.Write(describe.LEVEL_0, "Crashes:\t<none>\n")
	} else {
		w.Write(describe.LEVEL_0, "Crashes:\n  Time\tPID\tReason\tExit\tHook\tRestarted\n")
		w.Write(describe.LEVEL_1, "----\t---\t------\t----\t----\t---------\n")
		for _, c := range st.Crashes {
			exit := "<none>"
			switch {
			case c.ExitCode != nil:
				exit = fmt.Sprintf("code %d", *c.ExitCode)
			case c.Signal != nil:
				exit = fmt.Sprintf("signal %d", *c.Signal)
			}
			w.Write(describe.LEVEL_1, "%s\t%d\t%s\t%s\t%s\t%t\n", c.Time.UTC().Format(time.RFC3339), c.PID, c.Reason, exit, orNone(c.Hook), c.Restarted)
		}
	}
	describeConditions(w, st.Conditions)
}

func describeCheckpoint(w describe.PrefixWriter, cp *tetherv1alpha1.Checkpoint) {
	s := &cp.Spec
	w.Write(describe.LEVEL_0, "Spec:\n")
	w.Write(describe.LEVEL_1, "Hook:\t%s\n", s.HookName)
	w.Write(describe.LEVEL_1, "Trigger:\t%s\n", s.Trigger)
	w.Write(describe.LEVEL_1, "Description:\t%s\n", orNone(s.Description))
	w.Write(describe.LEVEL_1, "Step:\t%s\n", orNone(s.Step))
	w.Write(describe.LEVEL_1, "Hook State:\t%s\n", orNone(string(s.State)))
	w.Write(describe.LEVEL_1, "Seq:\t%d\n", s.Seq)
	if s.PullRequest != "" {
		w.Write(describe.LEVEL_1, "Pull Request:\t%s\n", s.PullRequest)
	}
	for _, d := range s.Degraded {
		w.Write(describe.LEVEL_1, "Degraded:\t%s\n", d)
	}
	if len(s.SkippedFiles) > 0 {
		w.Write(describe.LEVEL_1, "Skipped Files:\t%s\n", strings.Join(s.SkippedFiles, ", "))
	}
	if g := s.Git; g != nil {
		w.Write(describe.LEVEL_1, "Git:\n")
		w.Write(describe.LEVEL_2, "Branch:\t%s\n", orNone(g.Branch))
		w.Write(describe.LEVEL_2, "Commit:\t%s\n", orNone(g.Commit))
		w.Write(describe.LEVEL_2, "Dirty:\t%t\n", g.Dirty)
		w.Write(describe.LEVEL_2, "Snapshot Ref:\t%s\n", orNone(g.SnapshotRef))
		w.Write(describe.LEVEL_2, "Snapshot Commit:\t%s\n", orNone(g.SnapshotCommit))
	} else {
		w.Write(describe.LEVEL_1, "Git:\t<none>\n")
	}
	if len(s.Files) == 0 {
		w.Write(describe.LEVEL_0, "Files:\t<none>\n")
	} else {
		title := "Files:\n"
		if s.FilesTruncated {
			title = "Files (truncated):\n"
		}
		w.Write(describe.LEVEL_0, title)
		w.Write(describe.LEVEL_1, "Change\tPath\tMode\tSize\tModified\tHash\n")
		w.Write(describe.LEVEL_1, "------\t----\t----\t----\t--------\t----\n")
		for _, f := range s.Files {
			mod := "<none>"
			if f.ModTime != nil {
				mod = f.ModTime.UTC().Format(time.RFC3339)
			}
			w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%d\t%s\t%s\n", orNone(string(f.Change)), quoteIfNeeded(f.Path), orNone(f.Mode), f.Size, mod, orNone(f.Hash))
		}
	}
	describeConditions(w, cp.Status.Conditions)
}

func describeEvent(w describe.PrefixWriter, e *corev1.Event) {
	w.Write(describe.LEVEL_0, "Type:\t%s\n", e.Type)
	w.Write(describe.LEVEL_0, "Reason:\t%s\n", e.Reason)
	w.Write(describe.LEVEL_0, "Object:\t%s/%s\n", strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name)
	w.Write(describe.LEVEL_0, "Source:\t%s\n", orNone(eventSource(e)))
	w.Write(describe.LEVEL_0, "Count:\t%d\n", max(e.Count, 1))
	w.Write(describe.LEVEL_0, "First Seen:\t%s\n", timeAndAge(e.FirstTimestamp))
	w.Write(describe.LEVEL_0, "Last Seen:\t%s\n", timeAndAge(e.LastTimestamp))
	w.Write(describe.LEVEL_0, "Message:\t%s\n", strings.TrimSpace(e.Message))
}

func describeConditions(w describe.PrefixWriter, conds []metav1.Condition) {
	if len(conds) == 0 {
		w.Write(describe.LEVEL_0, "Conditions:\t<none>\n")
		return
	}
	w.Write(describe.LEVEL_0, "Conditions:\n  Type\tStatus\tReason\tGeneration\tLast Transition\tMessage\n")
	w.Write(describe.LEVEL_1, "----\t------\t------\t----------\t---------------\t-------\n")
	for _, c := range conds {
		w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%d\t%s\t%s\n", c.Type, c.Status, c.Reason, c.ObservedGeneration, since(c.LastTransitionTime.Time)+" ago", c.Message)
	}
}
