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

// Package agentsession is what `tether agent hook` does with a coding
// agent's hook event: it finds the Hook the agent works on (environment,
// binding file, or workspace), records the agent's session on the Hook's
// status.agentSession, heartbeats, takes checkpoints on compaction and git
// activity, injects the recovery file at SessionStart and keeps the Stop
// loop going within its caps. It is the same for every agent: it reads
// agentevent's neutral events and answers with agentevent's neutral
// answers, which each agent's adapter (claudehook, ...) translates; this
// package does the store work, through a client.Client, and is called
// in-process by tests.
package agentsession

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/agent/claudehook"
	"github.com/tether-dev/tether/internal/agent/githooks"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

// Timeout bounds all the store work of one event: the agent gets its answer
// within it, whatever the store does.
const Timeout = 2 * time.Second

// MaxHeartbeatInterval is the longest a prompt or tool call goes without
// writing its heartbeat: one within this interval of the last (and within a
// quarter of the Hook's staleAfter) is only read, not written, so that a
// burst of tool calls costs one status write, not one each.
const MaxHeartbeatInterval = 10 * time.Second

// liveChangesTimeout bounds the git run that finds the files changed since
// the last checkpoint (and the work lost) when the event has no deadline.
const liveChangesTimeout = 500 * time.Millisecond

// answerReserve is the part of an event's deadline kept, after that git
// run, for what the answer still does: a status write and the rendering.
const answerReserve = 500 * time.Millisecond

// liveChangesBudget is how long the git run that finds lost work may take:
// what is left of the event's deadline, less answerReserve. A fixed bound
// shorter than that gave up on a busy machine while the answer still had
// time, and then a Stop let the agent end with its work lost, unsaid.
func liveChangesBudget(ctx context.Context, now time.Time) time.Duration {
	deadline, ok := ctx.Deadline()
	if !ok {
		return liveChangesTimeout
	}
	return deadline.Sub(now) - answerReserve
}

// Event reasons and actions of the Events this package records.
const (
	// ActionAgentLoop is the action of the Event that says why the Stop
	// loop ended; its reason is the agentevent.EndReason.
	ActionAgentLoop = "AgentLoop"
)

// Options is what Handle needs besides the event.
type Options struct {
	// Client reads and writes the Hooks.
	Client client.Client
	// Namespace is where Hooks are looked for when neither the environment
	// nor a binding names one.
	Namespace string
	// Getenv reads the agent's environment; nil means no variable is set.
	Getenv func(string) string
	// Recorder records the Event that says why the Stop loop ended; nil
	// records none.
	Recorder events.EventRecorder
	// CheckpointRecorder returns the recorder of the CheckpointTaken Event of
	// a checkpoint the hook takes; it is called only then, so that the
	// events that take none start no Event broadcaster. Nil records none.
	CheckpointRecorder func() events.EventRecorder
	// Limits are the Stop caps (zero fields take agentevent's defaults).
	Limits agentevent.Limits
	// Evidence verifies receipts in the recovery file; nil checks
	// everything but the signatures.
	Evidence recoveryfile.Evidence
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DefaultStaleAfter is the staleAfter of Hooks whose spec sets none
	// (the configuration file's); zero means config.DefaultStaleAfter.
	DefaultStaleAfter time.Duration
	// Capabilities are the agent's (its adapter's
	// agentevent.CapabilitiesOf); the zero ones are Claude Code's.
	Capabilities agentevent.Capabilities
}

// Result is Serve's answer and what it has to say beside it.
type Result struct {
	// Reply is tether's answer, for the agent's adapter to render.
	Reply agentevent.Answer
	// Answer is Reply in Claude Code's protocol; only Handle sets it.
	Answer claudehook.Answer
	// Notes are one-line messages for stderr (no Hook, a skipped binding
	// file, a checkpoint that failed); they never change the answer.
	Notes []string
	// Target is the Hook the event was about; zero when none was found.
	Target Target
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

// Serve answers one event, whichever agent sent it. Errors of the store are
// returned for the caller to report as a warning with a no-op answer; a
// missing or ambiguous Hook is not an error but a note (and, where the agent
// can read it, context).
func Serve(ctx context.Context, ev agentevent.Event, opts Options) (Result, error) {
	var res Result
	note := func(s string) { res.Notes = append(res.Notes, s) }
	target, err := Resolve(ctx, opts.Client, opts.Namespace, ev.CWD, opts.getenv, note)
	var amb *AmbiguousError
	switch {
	case errors.Is(err, ErrNoHook):
		note("tether: no Hook for " + orDot(ev.CWD) + "; nothing to do (bind one with `tether agent bind HOOK`)")
		return res, nil
	case errors.As(err, &amb):
		note("tether: " + amb.Error())
		if ev.Kind == agentevent.SessionStart || ev.Kind == agentevent.Prompt {
			res.Reply = agentevent.Answer{Context: "tether: which task this session works on is ambiguous. " + amb.Error() + "."}
		}
		return res, nil
	case err != nil:
		return res, err
	}
	res.Target = target
	h := &handler{opts: &opts, ev: ev, key: target.Key, res: &res}
	switch ev.Kind {
	case agentevent.SessionStart:
		err = h.sessionStart(ctx)
	case agentevent.PostCompact:
		// What a compaction lost, as at Claude Code's SessionStart after one.
		h.ev.Source = agentevent.SourceCompact
		err = h.sessionStart(ctx)
	case agentevent.Prompt:
		err = h.heartbeat(ctx)
	case agentevent.ToolDone:
		if err = h.heartbeat(ctx); err == nil {
			h.gitActivity(ctx)
		}
	case agentevent.PreCompact:
		err = h.preCompact(ctx)
	case agentevent.TurnEnd:
		err = h.stop(ctx)
	case agentevent.SessionEnd:
		err = h.sessionEnd(ctx)
	default:
		return res, nil
	}
	if apierrors.IsNotFound(err) {
		res.Reply, res.Target = agentevent.Answer{}, Target{}
		note(fmt.Sprintf("tether: hook %q (namespace %q, from %s) not found; nothing to do", target.Key.Name, target.Key.Namespace, target.Source))
		return res, nil
	}
	return res, err
}

// Handle is Serve for a Claude Code event, with the answer in Claude Code's
// protocol in Result.Answer.
func Handle(ctx context.Context, ev claudehook.Event, opts Options) (Result, error) {
	n := claudehook.Neutral(ev)
	res, err := Serve(ctx, n, opts)
	res.Answer = claudehook.RenderAnswer(n.Native, res.Reply)
	return res, err
}

func orDot(s string) string {
	if s == "" {
		return "the working directory"
	}
	return s
}

type handler struct {
	opts *Options
	ev   agentevent.Event
	key  client.ObjectKey
	res  *Result
}

func (h *handler) note(s string) { h.res.Notes = append(h.res.Notes, s) }

// touch records the event's session on hook: a new session (another id)
// replaces the old record, remembering it in resumedFrom and starting its
// consecutive count again; the Hook-wide count carries over.
func (h *handler) touch(hook *v1.Hook, now time.Time) *v1.AgentSession {
	st := &hook.Status
	s := st.AgentSession
	if s == nil || (h.ev.SessionID != "" && s.SessionID != h.ev.SessionID) {
		n := &v1.AgentSession{SessionID: truncate(h.ev.SessionID, 256), StartedAt: ptrTime(now)}
		if s != nil {
			n.ResumedFrom = s.SessionID
			n.HookContinuations = s.HookContinuations
		}
		st.AgentSession, s = n, n
	}
	if h.ev.TranscriptPath != "" {
		s.TranscriptPath = truncate(h.ev.TranscriptPath, 4096)
	}
	if h.ev.Agent != "" {
		s.Agent = truncate(h.ev.Agent, 64)
	}
	if h.ev.AgentVersion != "" {
		s.AgentVersion = truncate(h.ev.AgentVersion, 64)
	}
	mt := metav1.NewMicroTime(now)
	s.LastSeen = &mt
	return s
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// heartbeat is the path of every prompt and tool call: one Get, and one
// status update that heartbeats the Hook (unless it is terminal) and
// refreshes agentSession.lastSeen, skipped while both are fresh (see
// MaxHeartbeatInterval). For an agent with no event after a compaction, an
// event whose answer reaches the model also gives the session's pending
// anchor, clearing it in the same write.
func (h *handler) heartbeat(ctx context.Context) error {
	now := h.opts.now()
	// A person's prompt starts the count of continuations in a row again,
	// for agents whose end of turn cannot say that a person spoke (Gemini
	// CLI submits tether's continuation as a prompt of its own, Continued).
	person := h.ev.Kind == agentevent.Prompt && !h.ev.Continued
	caps := h.opts.Capabilities
	anchorAt := caps.NoCompactStart && caps.CarriesContext(h.ev.Kind)
	var deliver bool
	hook, err := hookwrite.UpdateStatus(ctx, h.opts.Client, h.key, func(hook *v1.Hook) (bool, error) {
		deliver = false
		s := hook.Status.AgentSession
		same := s != nil && s.SessionID == h.ev.SessionID
		reset := person && same && s.Continuations != 0
		pending := anchorAt && same && s.AnchorPending > 0
		if h.fresh(hook, now) && !reset && !pending {
			return false, nil
		}
		if !hook.Status.State.IsTerminal() {
			// A heartbeat the state machine refuses changes nothing.
			_, _ = hookwrite.Apply(hook, hookfsm.Input{Event: hookfsm.Heartbeat}, hookwrite.Options{Now: func() time.Time { return now }})
		}
		s = h.touch(hook, now)
		if person {
			s.Continuations = 0
		}
		if pending {
			s.AnchorPending, deliver = 0, true
		}
		return true, nil
	})
	if err != nil || !deliver {
		return err
	}
	summaries, err := recoveryfile.ListCheckpoints(ctx, h.opts.Client, hook)
	if err != nil {
		h.note(fmt.Sprintf("tether: listing the checkpoints of hook %q: %v", hook.Name, err))
	}
	h.res.Reply = agentevent.Answer{Context: compactAnchor(hook, summaries)}
	return nil
}

// fresh reports whether hook's heartbeat and this session's lastSeen are
// recent enough that a prompt or tool call need not write them again.
func (h *handler) fresh(hook *v1.Hook, now time.Time) bool {
	staleAfter := h.opts.DefaultStaleAfter
	if staleAfter <= 0 {
		staleAfter = config.DefaultStaleAfter
	}
	if d := hook.Spec.StaleAfter; d != nil && d.Duration > 0 {
		staleAfter = d.Duration
	}
	every := min(MaxHeartbeatInterval, staleAfter/4)
	recent := func(t time.Time) bool { d := now.Sub(t); return d >= 0 && d < every }
	st := &hook.Status
	s := st.AgentSession
	if s == nil || s.SessionID != h.ev.SessionID || s.EndedAt != nil || s.LastSeen == nil || !recent(s.LastSeen.Time) {
		return false
	}
	return st.State.IsTerminal() || (st.LastHeartbeat != nil && recent(st.LastHeartbeat.Time))
}

// gitActivity takes the checkpoints a shell command's git commit, git push
// or gh pr create call for; commits and pushes are left to tether's git
// hooks when they are installed in the repository.
func (h *handler) gitActivity(ctx context.Context) {
	if h.ev.Shell == "" {
		return
	}
	d := agentevent.Detect(h.ev.Shell, h.ev.ShellOutput)
	if len(d.Triggers) == 0 {
		return
	}
	var states []githooks.State
	var statesErr error
	statesRead := false
	for _, t := range d.Triggers {
		trigger := v1.CheckpointTrigger(t)
		if t == agentevent.TriggerGitCommit || t == agentevent.TriggerGitPush {
			if !statesRead && h.ev.CWD != "" {
				states, statesErr = githooks.Status(ctx, githooks.Options{Dir: h.ev.CWD})
				statesRead = true
			}
			if statesErr == nil && gitHookInstalled(states, t) {
				continue
			}
		}
		req := checkpoint.Request{Trigger: trigger, Description: "detected in the agent's shell command", Now: h.opts.Now}
		if t == agentevent.TriggerPRCreated {
			req.PullRequest = d.PRURL
		}
		if err := h.takeCheckpoint(ctx, req); err != nil {
			h.note(fmt.Sprintf("tether: %s checkpoint of hook %q: %v", trigger, h.key.Name, err))
		}
	}
}

// gitHookInstalled reports whether tether's git hook for t is installed.
func gitHookInstalled(states []githooks.State, t agentevent.Trigger) bool {
	want := map[agentevent.Trigger]string{agentevent.TriggerGitCommit: "post-commit", agentevent.TriggerGitPush: "pre-push"}[t]
	for _, s := range states {
		if s.Hook == want && s.Installed {
			return true
		}
	}
	return false
}

// CheckpointActor names the agent hook as the taker of its checkpoints.
const CheckpointActor = "tether agent hook"

// takeCheckpoint takes a checkpoint of the Hook; one without
// spec.workspace is snapshotted in the event's working directory.
func (h *handler) takeCheckpoint(ctx context.Context, req checkpoint.Request) error {
	hook := &v1.Hook{}
	if err := h.opts.Client.Get(ctx, h.key, hook); err != nil {
		return err
	}
	if hook.Status.State.IsTerminal() {
		return nil
	}
	if hook.Spec.Workspace == "" {
		req.Workspace = h.ev.CWD
	}
	if h.opts.CheckpointRecorder != nil {
		req.Recorder, req.Actor = h.opts.CheckpointRecorder(), CheckpointActor
	}
	_, err := checkpoint.Take(ctx, h.opts.Client, h.key, req)
	return err
}

// preCompact takes a pre_compact checkpoint. The compaction is counted at
// SessionStart with source compact, when it happened: the client runs
// PreCompact before it commits to compacting and may give up. An agent whose
// PreCompact Compacts has it counted here, and when no event follows the
// compaction its anchor is left pending for the next event that can carry
// it.
func (h *handler) preCompact(ctx context.Context) error {
	desc := "before the agent's context was compacted"
	if h.ev.Trigger != "" {
		desc += " (" + truncate(h.ev.Trigger, 32) + ")"
	}
	if err := h.takeCheckpoint(ctx, checkpoint.Request{Trigger: v1.TriggerPreCompact, Description: desc, Now: h.opts.Now}); err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		h.note(fmt.Sprintf("tether: pre_compact checkpoint of hook %q: %v", h.key.Name, err))
	}
	now := h.opts.now()
	_, err := hookwrite.UpdateStatus(ctx, h.opts.Client, h.key, func(hook *v1.Hook) (bool, error) {
		s := h.touch(hook, now)
		if h.ev.Compacts {
			s.Compactions++
			s.LastCompactedAt = ptrTime(now)
			if h.opts.Capabilities.NoCompactStart {
				s.AnchorPending = s.Compactions
			}
		}
		return true, nil
	})
	return err
}

// sessionEnd records the end of the session holding the Hook, with the
// state and step it left; the end of another session changes nothing.
func (h *handler) sessionEnd(ctx context.Context) error {
	now := h.opts.now()
	_, err := hookwrite.UpdateStatus(ctx, h.opts.Client, h.key, func(hook *v1.Hook) (bool, error) {
		if s := hook.Status.AgentSession; s != nil && h.ev.SessionID != "" && s.SessionID != h.ev.SessionID {
			return false, nil
		}
		s := h.touch(hook, now)
		s.EndedAt = ptrTime(now)
		s.EndReason = truncate(h.ev.Reason, 256)
		if s.EndReason == "" {
			s.EndReason = "other"
		}
		s.EndedInState, s.EndedInStep = hook.Status.State, ""
		if cs := hook.Status.CurrentStep; cs != nil && !hook.Status.State.IsTerminal() {
			s.EndedInStep = cs.Name
		}
		s.Continuations = 0
		return true, nil
	})
	return err
}

// sessionStart records the session and answers with the recovery file.
func (h *handler) sessionStart(ctx context.Context) error {
	now := h.opts.now()
	var last string
	hook, err := hookwrite.UpdateStatus(ctx, h.opts.Client, h.key, func(hook *v1.Hook) (bool, error) {
		last = lastSessionLine(hook, h.ev)
		prev := hook.Status.AgentSession
		var prevEnded bool
		if prev != nil {
			prevEnded = prev.EndedAt != nil
		}
		s := h.touch(hook, now)
		if prev != nil && prev == s && prevEnded {
			// The same session again (resume after an exit): it runs again.
			s.EndedAt, s.EndReason, s.EndedInState, s.EndedInStep = nil, "", "", ""
		}
		switch src := v1.AgentSessionSource(h.ev.Source); src {
		case v1.SessionStartup, v1.SessionResume, v1.SessionClear, v1.SessionCompact:
			s.Source = src
		}
		if h.ev.Source == string(v1.SessionCompact) {
			s.Compactions++
			s.LastCompactedAt = ptrTime(now)
		}
		if prev != s {
			s.LastFingerprint = ""
		}
		// The recovery file answered here holds what the anchor would say.
		s.AnchorPending = 0
		return true, nil
	})
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(SupersedeLine(hook, now))
	mismatch := len(hookfsm.CheckHistory(hook)) > 0
	if st := hook.Status.State; st.IsTerminal() && !mismatch {
		fmt.Fprintf(&b, "tether: hook %s is %s; nothing is left to do on it (%s).", hook.Name, st, hookfsm.NextAction(hook))
		h.res.Reply = agentevent.Answer{Context: b.String()}
		return nil
	}
	b.WriteString(last)
	if hook.Spec.Suspend {
		fmt.Fprintf(&b, "tether: hook %s is PAUSED%s. Do not work on it until a person unpauses it.\n\n", hook.Name, pauseReason(hook))
	}
	opts := recoveryfile.Options{Evidence: h.opts.Evidence}
	summaries, err := recoveryfile.ListCheckpoints(ctx, h.opts.Client, hook)
	if err != nil {
		h.note(fmt.Sprintf("tether: listing the checkpoints of hook %q: %v", hook.Name, err))
	}
	opts.Checkpoints = summaries
	_ = recoveryfile.LiveChanges(ctx, hook, &opts, liveChangesBudget(ctx, time.Now())) // without git, the status's list is shown
	if h.ev.Source == string(v1.SessionCompact) {
		b.WriteString(compactAnchor(hook, summaries))
	}
	b.Write(recoveryfile.Render(hook, opts))
	h.res.Reply = agentevent.Answer{Context: b.String()}
	return nil
}

// SupersedeLine is the first line of every context tether injects: the
// client keeps each earlier SessionStart context in a resumed conversation,
// and this names the Hook's version and the time, so that a model never acts
// on a stale copy.
func SupersedeLine(hook *v1.Hook, now time.Time) string {
	return fmt.Sprintf("tether context for hook %s/%s, resourceVersion %s, %s: this supersedes every earlier tether context in this conversation; act on this one only.\n\n",
		hook.Namespace, hook.Name, orNone(hook.ResourceVersion), now.UTC().Format(time.RFC3339))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// lastSessionLine says, before the session record is rewritten, that the
// previous session (another session id, or this one resumed) left the Hook
// in the middle of a step: what the new session most needs to hear. A
// session killed without a SessionEnd counts as ended when the next starts.
func lastSessionLine(hook *v1.Hook, ev agentevent.Event) string {
	st := &hook.Status
	s, cs := st.AgentSession, st.CurrentStep
	if s == nil || cs == nil || st.State.IsTerminal() || ev.Source == string(v1.SessionCompact) {
		return ""
	}
	step, state, how := cs.Name, st.State, "it was killed or crashed: no SessionEnd came"
	if s.EndedAt != nil {
		step, state, how = s.EndedInStep, s.EndedInState, "reason "+s.EndReason+", at "+s.EndedAt.UTC().Format(time.RFC3339)
	} else if s.SessionID == ev.SessionID && ev.Source != string(v1.SessionResume) {
		return ""
	}
	switch state {
	case v1.HookStepRunning, v1.HookStepValidating, v1.HookRecovering:
	default:
		return ""
	}
	if step == "" {
		return ""
	}
	return fmt.Sprintf("> **The last session ended during step %q** (state `%s`; %s). Its work on the step may be unfinished: check the files touched before going on.\n\n", step, state, how)
}

func pauseReason(hook *v1.Hook) string {
	if r := strings.TrimSpace(hook.Annotations[v1.PauseReasonAnnotation]); r != "" {
		return ": " + strings.Join(strings.Fields(r), " ")
	}
	return " (spec.suspend is true; no reason was given)"
}

// compactAnchor is what a compaction lost, first: the step, its attempt,
// the files touched and the last checkpoint.
func compactAnchor(hook *v1.Hook, cps []recoveryfile.CheckpointSummary) string {
	var b strings.Builder
	st := &hook.Status
	b.WriteString("# Your context was just compacted: where you were\n\n")
	fmt.Fprintf(&b, "- Task: hook %s, state `%s`\n", hook.Name, st.State.OrInitializing())
	if cs := st.CurrentStep; cs != nil {
		fmt.Fprintf(&b, "- Current step: %q (%d/%d), attempt %d of %d\n", cs.Name, cs.Index+1, len(hook.Spec.Steps), cs.Attempt, hookfsm.MaxAttempts(&hook.Spec))
		if cs.WorkingOn != "" {
			fmt.Fprintf(&b, "- Working on: %s\n", strings.Join(strings.Fields(cs.WorkingOn), " "))
		}
		if len(cs.FilesTouched) > 0 {
			fmt.Fprintf(&b, "- Files touched: %s\n", strings.Join(cs.FilesTouched, ", "))
		} else {
			b.WriteString("- Files touched: none recorded\n")
		}
	} else {
		b.WriteString("- Current step: none begun\n")
	}
	switch {
	case len(cps) > 0:
		c := cps[0]
		fmt.Fprintf(&b, "- Last checkpoint: %s (%s, %s", c.Name, c.Trigger, c.Created.UTC().Format(time.RFC3339))
		if c.SnapshotCommit != "" {
			fmt.Fprintf(&b, ", snapshot %s", shortSHA(c.SnapshotCommit))
		}
		b.WriteString(")\n")
	case st.LastCheckpoint != nil:
		fmt.Fprintf(&b, "- Last checkpoint: %s (%s)\n", st.LastCheckpoint.Name, st.LastCheckpoint.Trigger)
	default:
		b.WriteString("- Last checkpoint: none\n")
	}
	fmt.Fprintf(&b, "- Next: %s\n\n", hookfsm.NextAction(hook))
	return b.String()
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Fingerprint is the Hook's progress as the Stop loop sees it: state,
// step, attempt, the number of transitions and the tree of the last
// checkpoint. A continuation after which none of them changed made no
// progress.
func Fingerprint(hook *v1.Hook) string {
	st := &hook.Status
	var idx, attempt int32 = -1, 0
	if cs := st.CurrentStep; cs != nil {
		idx, attempt = cs.Index, cs.Attempt
	}
	tree := ""
	if lc := st.LastCheckpoint; lc != nil {
		tree = lc.SnapshotTree
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d\x00%s", st.State.OrInitializing(), idx, attempt, int64(len(st.History))+st.HistoryDropped, tree))
	return hex.EncodeToString(sum[:16])
}

// ContinuationText is what a Stop continuation tells the agent: the one
// next action, which names the verb to run; with lost work, the restore
// first and the step's next action after it. While the status disagrees
// with its history, it is the next action alone, which tells the agent to
// stop and ask a person, whatever the status says.
func ContinuationText(hook *v1.Hook, lost *recoveryfile.LostWork) string {
	if len(hookfsm.CheckHistory(hook)) > 0 {
		return fmt.Sprintf("tether: the status of hook %s disagrees with its history. Next: %s", hook.Name, hookfsm.NextAction(hook))
	}
	if lost != nil && len(lost.Paths) > 0 {
		return fmt.Sprintf("tether: hook %s is not finished (%s). Next: %s\n\nAfter that: %s", hook.Name, hookfsm.Describe(hook), lost.Action(), hookfsm.NextAction(hook))
	}
	return fmt.Sprintf("tether: hook %s is not finished (%s). Next: %s", hook.Name, hookfsm.Describe(hook), hookfsm.NextAction(hook))
}

// lostWork is the work the Hook's workspace lost that one of its
// checkpoints holds, read before the status update so that git runs once,
// outside the retry loop; nil when nothing is lost or it cannot be told.
func (h *handler) lostWork(ctx context.Context) *recoveryfile.LostWork {
	hook := &v1.Hook{}
	if err := h.opts.Client.Get(ctx, h.key, hook); err != nil || hook.Status.State.IsTerminal() || hook.Spec.Workspace == "" {
		return nil
	}
	summaries, err := recoveryfile.ListCheckpoints(ctx, h.opts.Client, hook)
	if err != nil {
		return nil
	}
	opts := recoveryfile.Options{Checkpoints: summaries}
	if err := recoveryfile.LiveChanges(ctx, hook, &opts, liveChangesBudget(ctx, time.Now())); err != nil {
		return nil
	}
	return opts.Lost
}

// stop decides whether the agent may stop, persists the counters, and says
// on the Hook (condition AgentLoop, and an Event when it ends) why the loop
// ended.
func (h *handler) stop(ctx context.Context) error {
	now := h.opts.now()
	lost := h.lostWork(ctx)
	var d agentevent.StopDecision
	var prevCond *metav1.Condition
	hook, err := hookwrite.UpdateStatus(ctx, h.opts.Client, h.key, func(hook *v1.Hook) (bool, error) {
		prevCond = nil
		if c := meta.FindStatusCondition(hook.Status.Conditions, v1.ConditionAgentLoop); c != nil {
			cc := *c
			prevCond = &cc
		}
		s := h.touch(hook, now)
		st := hook.Status.State
		fp := Fingerprint(hook)
		mismatch := len(hookfsm.CheckHistory(hook)) > 0
		next := ""
		if !st.IsTerminal() || mismatch {
			next = ContinuationText(hook, lost)
		}
		d = agentevent.Decide(agentevent.StopInput{
			HistoryMismatch: mismatch,
			Terminal:        st.IsTerminal(),
			State:           string(st),
			AwaitingHuman:   st == v1.HookAwaitingHuman,
			Suspended:       hook.Spec.Suspend,
			Continued:       h.ev.Continued,
			Consecutive:     int(s.Continuations),
			HookTotal:       int(s.HookContinuations),
			LastFingerprint: s.LastFingerprint,
			Fingerprint:     fp,
			Next:            next,
		}, h.opts.Limits)
		s.Continuations, s.HookContinuations = int32(d.Consecutive), int32(d.HookTotal)
		cond := metav1.Condition{Type: v1.ConditionAgentLoop, ObservedGeneration: hook.Generation}
		if d.Block {
			s.LastFingerprint = fp
			cond.Status, cond.Reason = metav1.ConditionTrue, v1.ReasonContinuing
			cond.Message = fmt.Sprintf("session %s continued at Stop (%d in a row, %d for the Hook)", s.SessionID, d.Consecutive, d.HookTotal)
		} else {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, string(d.End), d.Message
		}
		cond.LastTransitionTime = metav1.NewTime(now)
		meta.SetStatusCondition(&hook.Status.Conditions, cond)
		return true, nil
	})
	if err != nil {
		return err
	}
	if d.Block {
		h.res.Reply = agentevent.Answer{Continue: true, Reason: d.Reason}
	}
	if !d.Block && (prevCond == nil || prevCond.Status != metav1.ConditionFalse || prevCond.Reason != string(d.End)) && h.opts.Recorder != nil {
		typ := corev1.EventTypeNormal
		switch d.End {
		case agentevent.EndHookCap, agentevent.EndConsecutiveCap, agentevent.EndNoProgress, agentevent.EndHistoryMismatch:
			typ = corev1.EventTypeWarning
		}
		h.opts.Recorder.Eventf(hook, nil, typ, string(d.End), ActionAgentLoop, "the agent's Stop loop ended: %s", d.Message)
	}
	return nil
}
