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

package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/worker/supervise"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// WorkerFinalizer makes deleting a Worker stop the process it launched.
const WorkerFinalizer = "agents.tether.dev/stop-process"

// Event reasons of the Worker reconciler.
const (
	// EventWorkerCrashed is the Warning recorded when a Worker's process dies.
	EventWorkerCrashed = "WorkerCrashed"
	// EventRestartsExhausted is the Warning recorded when a Worker enters CrashLoop.
	EventRestartsExhausted = "RestartsExhausted"
	// EventWorkerStarted is recorded when a process is launched or adopted.
	EventWorkerStarted = "WorkerStarted"
	// EventWorkerStopped is recorded when a process exits cleanly or on request.
	EventWorkerStopped = "WorkerStopped"
	// EventStartFailed is the Warning recorded when a process cannot be launched or adopted.
	EventStartFailed = "StartFailed"
	// EventWorkerLost is the Warning recorded when a remote Worker's heartbeat expires.
	EventWorkerLost = "WorkerLost"
	// EventAssigneeLost is the Warning recorded on a Hook whose Worker died.
	EventAssigneeLost = "AssigneeLost"
)

// Reasons of crash records besides supervise's exit reasons.
const (
	// ReasonHeartbeatExpired means a remote Worker stopped heartbeating.
	ReasonHeartbeatExpired = "HeartbeatExpired"
)

// WorkerOptions configure the Worker reconciler.
type WorkerOptions struct {
	// Recorder records Events; required.
	Recorder events.EventRecorder
	// Reader reads Hooks and Workers around the cache, so that a crash
	// frees the Hooks held at that moment; default the manager's client.
	// On the local store pass the store's client: the manager's API reader
	// would go to the network.
	Reader client.Reader
	// Host is this machine's name, recorded in status.host; default os.Hostname.
	Host string
	// LogDir receives one log file per launched Worker, LogDir/NAMESPACE/NAME.log.
	LogDir string
	// Env is added to every launched process, after the reconciler's own
	// environment and before spec.env.
	Env []string
	// StopGrace is how long a stopped process gets between SIGTERM and SIGKILL; default 10s.
	StopGrace time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles; default 4.
	MaxConcurrentReconciles int
	// SkipNameValidation allows several managers in one process, as in
	// benchmarks; controller-runtime otherwise refuses a second "worker".
	SkipNameValidation bool
}

// WorkerReconciler launches or adopts each Worker's process, turns its exit
// into a crash record, frees the Hooks it held and restarts it within the
// crash budget. Exits arrive as events from waited-on children and pidfd
// watches; nothing polls.
type WorkerReconciler struct {
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
	host     string
	bootID   string
	logDir   string
	env      []string
	grace    time.Duration
	procs    *procTable
	now      func() time.Time
}

// SetupWorker registers the Worker reconciler with mgr.
func SetupWorker(mgr ctrl.Manager, opts WorkerOptions) error {
	r, err := newWorkerReconciler(mgr.GetClient(), opts)
	if err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.procs.close()
		return nil
	})); err != nil {
		return err
	}
	workers := opts.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1.Worker{}).
		Named("worker").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, SkipNameValidation: &opts.SkipNameValidation}).
		WatchesRawSource(source.Channel(r.procs.events, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

func newWorkerReconciler(c client.Client, opts WorkerOptions) (*WorkerReconciler, error) {
	if opts.Recorder == nil {
		return nil, fmt.Errorf("worker reconciler: no event recorder")
	}
	host := opts.Host
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("worker reconciler: host name: %w", err)
		}
		host = h
	}
	boot, err := supervise.BootID()
	if err != nil {
		return nil, fmt.Errorf("worker reconciler: %w", err)
	}
	reader := opts.Reader
	if reader == nil {
		reader = c
	}
	grace := opts.StopGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	logDir := opts.LogDir
	if logDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("worker reconciler: no log directory: %w", err)
		}
		logDir = filepath.Join(dir, "tether", "logs")
	}
	return &WorkerReconciler{
		client: c, reader: reader, recorder: opts.Recorder, host: host, bootID: boot,
		logDir: logDir, env: slices.Clone(opts.Env), grace: grace, procs: newProcTable(), now: time.Now,
	}, nil
}

// Reconcile drives one Worker toward a supervised, running process.
func (r *WorkerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &v1.Worker{}
	if err := r.client.Get(ctx, req.NamespacedName, w); err != nil {
		if apierrors.IsNotFound(err) {
			r.procs.forgetAll(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !w.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, w)
	}
	if !controllerutil.ContainsFinalizer(w, WorkerFinalizer) {
		controllerutil.AddFinalizer(w, WorkerFinalizer)
		if err := r.client.Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	if w.Spec.Template != nil {
		return ctrl.Result{}, r.reconcileTemplate(ctx, w)
	}
	if r.remote(w) {
		return r.reconcileHeartbeat(ctx, w)
	}
	if w.Status.PID != 0 {
		return ctrl.Result{}, r.reconcileProcess(ctx, w)
	}
	switch w.Status.Phase {
	case "", v1.WorkerPending, v1.WorkerRestarting, v1.WorkerRunning:
		return ctrl.Result{}, r.start(ctx, w)
	}
	return ctrl.Result{}, r.writeStatusIfChanged(ctx, w)
}

// remote tells whether w is judged by heartbeat: it runs on another host,
// or it names no process for this host to supervise.
func (r *WorkerReconciler) remote(w *v1.Worker) bool {
	if w.Status.Host != "" && w.Status.Host != r.host {
		return true
	}
	return len(w.Spec.Command) == 0 && w.Spec.Adopt == nil
}

func identityOf(w *v1.Worker) supervise.Identity {
	return supervise.Identity{PID: int(w.Status.PID), StartTicks: w.Status.ProcessStartTicks, BootID: w.Status.BootID}
}

// reconcileProcess follows the process recorded in status: it watches it
// if no watch runs yet (after a restart of the reconciler), and handles its
// exit once it ended. A recorded start time or boot that does not match
// the PID's current process means the recorded process is gone.
func (r *WorkerReconciler) reconcileProcess(ctx context.Context, w *v1.Worker) error {
	key := client.ObjectKeyFromObject(w)
	id := identityOf(w)
	p, ok := r.procs.get(key)
	if ok && p.id != id {
		// The cache may lag behind the status this reconciler wrote when it
		// launched the tracked process. Replacing that child's wait with a
		// pidfd watch of the older, dead process would lose the child's
		// exit status, so the live object decides.
		fresh := &v1.Worker{}
		if err := r.reader.Get(ctx, key, fresh); err != nil {
			return client.IgnoreNotFound(err)
		}
		if !fresh.DeletionTimestamp.IsZero() || fresh.Status.PID == 0 {
			return nil
		}
		*w = *fresh
		id = identityOf(w)
	}
	if !ok || p.id != id {
		if err := r.procs.watch(key, id); err != nil {
			return err
		}
		p, _ = r.procs.get(key)
	}
	if p.exit != nil {
		return r.handleExit(ctx, w, *p.exit, p.requested)
	}
	if w.Status.Phase == v1.WorkerRestarting {
		// A person asked to restart a running process: stop it; its exit,
		// marked as requested, starts the new one.
		r.procs.markRequested(key, id)
		return r.stop(w, id)
	}
	setPhase(&w.Status, workerfsm.Alive)
	return r.writeStatusIfChanged(ctx, w)
}

// stop ends the process id of w and its group, and its tmux session.
func (r *WorkerReconciler) stop(w *v1.Worker, id supervise.Identity) error {
	err := supervise.Stop(id, r.grace)
	if w.Status.TmuxSession != "" {
		if terr := supervise.KillTmuxSession(w.Status.TmuxSession); terr != nil && err == nil {
			err = terr
		}
	}
	if err != nil {
		return fmt.Errorf("stopping worker %s: %w", w.Name, err)
	}
	return nil
}

// launched is a process the reconciler just started.
type launched struct {
	id      supervise.Identity
	exits   <-chan supervise.Exit
	logFile string
	tmux    string
}

func (r *WorkerReconciler) launch(w *v1.Worker) (*launched, error) {
	l := &launched{logFile: filepath.Join(r.logDir, w.Namespace, w.Name+".log")}
	env := append(slices.Clone(r.env), "TETHER_WORKER="+w.Name, "TETHER_NAMESPACE="+w.Namespace)
	for _, e := range w.Spec.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	spec := supervise.LaunchSpec{Command: w.Spec.Command, Dir: w.Spec.Workdir, Env: env, LogFile: l.logFile}
	if w.Spec.Tmux != nil {
		l.tmux = w.Spec.Tmux.Session
		if l.tmux == "" {
			l.tmux = w.Name
		}
		// A session left by the previous process would make new-session fail.
		if err := supervise.KillTmuxSession(l.tmux); err != nil {
			return nil, err
		}
		id, err := supervise.LaunchTmux(l.tmux, spec)
		if err != nil {
			_ = supervise.KillTmuxSession(l.tmux)
			return nil, err
		}
		l.id = id
		return l, nil
	}
	id, exits, err := supervise.Launch(spec)
	if err != nil {
		return nil, err
	}
	l.id, l.exits = id, exits
	return l, nil
}

// track makes the procTable follow a launched process.
func (r *WorkerReconciler) track(key types.NamespacedName, l *launched) error {
	if l.exits != nil {
		r.procs.child(key, l.id, l.exits)
		return nil
	}
	return r.procs.watch(key, l.id)
}

// abandon stops a launched process whose status could not be recorded,
// so that no process runs unknown to status.
func (r *WorkerReconciler) abandon(l *launched) {
	_ = supervise.Stop(l.id, r.grace)
	if l.tmux != "" {
		_ = supervise.KillTmuxSession(l.tmux)
	}
	if l.exits != nil {
		<-l.exits
	}
}

func (r *WorkerReconciler) recordProcess(w *v1.Worker, id supervise.Identity, logFile, tmux string) {
	st := &w.Status
	st.PID, st.ProcessStartTicks, st.BootID, st.Host = int32(id.PID), id.StartTicks, id.BootID, r.host
	st.LogFile, st.TmuxSession = logFile, tmux
	t := metav1.NewTime(r.now())
	st.StartedAt = &t
}

func clearProcess(st *v1.WorkerStatus) {
	st.PID, st.ProcessStartTicks, st.BootID, st.StartedAt = 0, 0, "", nil
}

// start launches spec.command or adopts spec.adopt.pid.
func (r *WorkerReconciler) start(ctx context.Context, w *v1.Worker) error {
	key := client.ObjectKeyFromObject(w)
	manual := w.Status.Phase == v1.WorkerRestarting
	if w.Spec.Adopt != nil {
		id, err := supervise.Identify(int(w.Spec.Adopt.PID))
		if err != nil {
			return r.startFailed(ctx, w, fmt.Errorf("adopting pid %d: %w", w.Spec.Adopt.PID, err))
		}
		r.recordProcess(w, id, w.Status.LogFile, "")
		setPhase(&w.Status, workerfsm.Started)
		if err := r.writeStatus(ctx, w); err != nil {
			return err
		}
		r.recorder.Eventf(w, nil, corev1.EventTypeNormal, EventWorkerStarted, "Adopt", "adopted %s", id)
		return r.procs.watch(key, id)
	}
	l, err := r.launch(w)
	if err != nil {
		return r.startFailed(ctx, w, fmt.Errorf("launching %q: %w", w.Spec.Command[0], err))
	}
	r.recordProcess(w, l.id, l.logFile, l.tmux)
	setPhase(&w.Status, workerfsm.Started)
	if manual {
		w.Status.Restarts++
	}
	if err := r.writeStatus(ctx, w); err != nil {
		r.abandon(l)
		return err
	}
	r.recorder.Eventf(w, nil, corev1.EventTypeNormal, EventWorkerStarted, "Launch", "started %s, logging to %s", l.id, l.logFile)
	return r.track(key, l)
}

func (r *WorkerReconciler) startFailed(ctx context.Context, w *v1.Worker, cause error) error {
	clearProcess(&w.Status)
	setPhase(&w.Status, workerfsm.StartFailed)
	if err := r.writeStatus(ctx, w, condition(v1.ConditionProcessAlive, metav1.ConditionFalse, "StartFailed", cause.Error())); err != nil {
		return err
	}
	r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventStartFailed, "Start", "%v; fix the Worker and run `tether worker restart %s -n %s`", cause, w.Name, w.Namespace)
	return nil
}

// handleExit handles the end of the process recorded in w's status, once:
// the crash record, the restart and the new PID are one status write,
// guarded by resourceVersion, so a second attempt on a stale copy fails.
func (r *WorkerReconciler) handleExit(ctx context.Context, w *v1.Worker, exit supervise.Exit, requested bool) error {
	key := client.ObjectKeyFromObject(w)
	log := logr.FromContextOrDiscard(ctx)
	if requested {
		clearProcess(&w.Status)
		if w.Status.Phase == v1.WorkerRestarting {
			if err := r.start(ctx, w); err != nil {
				return err
			}
			r.procs.forget(key, exit.Identity)
			return nil
		}
		setPhase(&w.Status, workerfsm.Stopped)
		if err := r.writeStatus(ctx, w); err != nil {
			return err
		}
		r.procs.forget(key, exit.Identity)
		return nil
	}
	clean := exit.Reason == supervise.ReasonExited && exit.ExitCode == 0
	held, cleared, err := r.releaseHooks(ctx, w, exit.String())
	if err != nil {
		return err
	}
	now := r.now()
	action := Decide(&w.Spec, &w.Status, now)
	if clean {
		action = ActionNone
	}
	rec := v1.CrashRecord{
		Time: metav1.NewTime(exit.Time), PID: int32(exit.Identity.PID), Reason: exit.Reason,
		Hook: strings.Join(held, ","), AssigneeCleared: cleared,
	}
	switch exit.Reason {
	case supervise.ReasonExited:
		code := int32(exit.ExitCode)
		rec.ExitCode = &code
	case supervise.ReasonSignaled:
		sig := int32(exit.Signal)
		rec.Signal = &sig
	}
	var l *launched
	var launchErr error
	if action == ActionRestart {
		if l, launchErr = r.launch(w); launchErr != nil {
			action = ActionNone
		}
	}
	rec.Restarted = l != nil
	clearProcess(&w.Status)
	if !clean {
		appendCrash(&w.Status, rec)
	}
	var extra []metav1.Condition
	switch {
	case clean:
		setPhase(&w.Status, workerfsm.Exited)
	case l != nil:
		r.recordProcess(w, l.id, l.logFile, l.tmux)
		setPhase(&w.Status, workerfsm.CrashRestarted)
		w.Status.Restarts++
	case action == ActionNotifyOnly:
		setPhase(&w.Status, workerfsm.CrashLooped)
	default:
		setPhase(&w.Status, workerfsm.Crashed)
		if launchErr != nil {
			extra = append(extra, condition(v1.ConditionProcessAlive, metav1.ConditionFalse, "StartFailed", launchErr.Error()))
		}
	}
	if err := r.writeStatus(ctx, w, extra...); err != nil {
		if l != nil {
			r.abandon(l)
		}
		return err
	}
	r.procs.forget(key, exit.Identity)
	if l != nil {
		if err := r.track(key, l); err != nil {
			return err
		}
	}
	log.Info("worker process ended", "worker", key, "exit", exit.String(), "phase", w.Status.Phase, "hooks", held)
	r.emitExit(w, exit, rec, action, clean, l, launchErr)
	return nil
}

func (r *WorkerReconciler) emitExit(w *v1.Worker, exit supervise.Exit, rec v1.CrashRecord, action Action, clean bool, l *launched, launchErr error) {
	hooks := "it held no hook"
	if rec.Hook != "" {
		hooks = "it held hook " + rec.Hook
		if rec.AssigneeCleared {
			hooks += " (assignee cleared, now recovering)"
		}
	}
	if clean {
		r.recorder.Eventf(w, nil, corev1.EventTypeNormal, EventWorkerStopped, "Exit", "%s; %s", exit, hooks)
		return
	}
	budget := workerfsm.Budget(&w.Spec, &w.Status, r.now())
	switch {
	case l != nil:
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "Restart", "%s; %s; restarted as %s (%s)", exit, hooks, l.id, budget)
	case action == ActionNotifyOnly:
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "NotifyOnly", "%s; %s; not restarted: CrashLoop", exit, hooks)
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventRestartsExhausted, "NotifyOnly",
			"restarts exhausted: %s (maxCrashes %d); restart it by hand with `tether worker restart %s -n %s`",
			budget, maxCrashes(&w.Spec), w.Name, w.Namespace)
	case launchErr != nil:
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "Restart", "%s; %s; restart failed: %v", exit, hooks, launchErr)
	default:
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "NotifyOnly",
			"%s; %s; not restarted (spec.restart.auto is off); restart it by hand with `tether worker restart %s -n %s`", exit, hooks, w.Name, w.Namespace)
	}
}

// releaseHooks lists the Hooks w holds and, when spec.clearAssigneeOnCrash
// allows, frees each one: moved to recovering (crash type assignee_lost)
// and its assignee cleared. It reads around the cache so that a claim made
// just before the crash is not missed.
func (r *WorkerReconciler) releaseHooks(ctx context.Context, w *v1.Worker, why string) (held []string, cleared bool, err error) {
	hooks := &v1.HookList{}
	if err := r.reader.List(ctx, hooks, client.InNamespace(w.Namespace)); err != nil {
		return nil, false, fmt.Errorf("listing the hooks of worker %s: %w", w.Name, err)
	}
	for i := range hooks.Items {
		if hooks.Items[i].Spec.Assignee == w.Name {
			held = append(held, hooks.Items[i].Name)
		}
	}
	slices.Sort(held)
	clear := w.Spec.ClearAssigneeOnCrash == nil || *w.Spec.ClearAssigneeOnCrash
	if !clear || len(held) == 0 {
		return held, false, nil
	}
	for _, name := range held {
		if err := r.releaseHook(ctx, types.NamespacedName{Namespace: w.Namespace, Name: name}, w.Name, why); err != nil {
			return held, false, err
		}
	}
	return held, true, nil
}

// releaseHook frees one Hook if worker still holds it. The status moves to
// recovering before the assignee is cleared: if the reconciler dies in
// between, the retry still finds the Hook by its assignee, and the repeated
// interrupt is a no-op. Both writes carry the resourceVersion just read, so
// a concurrent change is never overwritten: the Hook is read again.
func (r *WorkerReconciler) releaseHook(ctx context.Context, key types.NamespacedName, worker, why string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h := &v1.Hook{}
		if err := r.reader.Get(ctx, key, h); err != nil {
			return client.IgnoreNotFound(err)
		}
		if h.Spec.Assignee != worker {
			return nil
		}
		moved := false
		if h.Status.State != v1.HookRecovering {
			st, err := hookfsm.Apply(h, hookfsm.Input{
				Event: hookfsm.Interrupt, Now: metav1.NewTime(r.now()), Actor: "worker/" + worker,
				Message: fmt.Sprintf("worker %s died: %s", worker, why),
				Crash:   &hookfsm.Crash{Type: v1.CrashAssigneeLost},
			})
			if err == nil {
				h.Status = *st
				if err := r.client.Status().Update(ctx, h); err != nil {
					return err
				}
				moved = true
			}
		}
		h.Spec.Assignee = ""
		if err := r.client.Update(ctx, h); err != nil {
			return err
		}
		state := "it stays " + string(h.Status.State)
		if moved || h.Status.State == v1.HookRecovering {
			state = fmt.Sprintf("it is recovering; the next worker claims it (`tether claim %s --worker W`) and reads `tether recover %s`", h.Name, h.Name)
		}
		r.recorder.Eventf(h, nil, corev1.EventTypeWarning, EventAssigneeLost, "ClearAssignee", "worker %s died (%s); assignee cleared; %s", worker, why, state)
		return nil
	})
}

// reconcileHeartbeat judges a Worker this host cannot see by its
// heartbeat, like a node lease: once status.lastHeartbeat is older than
// spec.heartbeatTimeout the Worker is Lost and its Hooks are freed.
func (r *WorkerReconciler) reconcileHeartbeat(ctx context.Context, w *v1.Worker) (ctrl.Result, error) {
	now := r.now()
	switch workerfsm.HeartbeatEvent(&w.Spec, &w.Status, now) {
	case workerfsm.AwaitingHeartbeat:
		setPhase(&w.Status, workerfsm.AwaitingHeartbeat)
		return ctrl.Result{}, r.writeStatusIfChanged(ctx, w)
	case workerfsm.Heartbeat:
		setPhase(&w.Status, workerfsm.Heartbeat)
		due := workerfsm.HeartbeatDue(&w.Spec, &w.Status)
		return ctrl.Result{RequeueAfter: due.Sub(now)}, r.writeStatusIfChanged(ctx, w)
	}
	if w.Status.Phase == v1.WorkerLost {
		return ctrl.Result{}, r.writeStatusIfChanged(ctx, w)
	}
	why := fmt.Sprintf("no heartbeat from host %s since %s", w.Status.Host, w.Status.LastHeartbeat.UTC().Format(time.RFC3339))
	held, cleared, err := r.releaseHooks(ctx, w, why)
	if err != nil {
		return ctrl.Result{}, err
	}
	appendCrash(&w.Status, v1.CrashRecord{Time: metav1.NewTime(now), PID: w.Status.PID, Reason: ReasonHeartbeatExpired, Hook: strings.Join(held, ","), AssigneeCleared: cleared})
	setPhase(&w.Status, workerfsm.HeartbeatExpired)
	if err := r.writeStatus(ctx, w); err != nil {
		return ctrl.Result{}, err
	}
	r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerLost, "Heartbeat", "%s (heartbeatTimeout %s); hooks freed: %s", why, heartbeatTimeout(&w.Spec), strings.Join(held, ","))
	return ctrl.Result{}, nil
}

// reconcileTemplate handles a Worker that runs as a Pod. Only a cluster
// can run Pods; the Pod-running reconciler is not part of this release, so
// the Worker says so in a condition rather than pretending to run.
func (r *WorkerReconciler) reconcileTemplate(ctx context.Context, w *v1.Worker) error {
	setPhase(&w.Status, workerfsm.Unsupported)
	return r.writeStatusIfChanged(ctx, w, condition(v1.ConditionReady, metav1.ConditionFalse, "PodTemplateUnsupported",
		"spec.template Workers are not run by this version of tether; use spec.command or spec.adopt"))
}

// finalize stops the process the Worker launched and frees its Hooks, then
// lets the deletion complete. An adopted process is only released: tether
// did not start it.
func (r *WorkerReconciler) finalize(ctx context.Context, w *v1.Worker) error {
	if !controllerutil.ContainsFinalizer(w, WorkerFinalizer) {
		return nil
	}
	key := client.ObjectKeyFromObject(w)
	if w.Status.PID != 0 && !r.remote(w) && w.Spec.Adopt == nil && w.Status.BootID == r.bootID {
		id := identityOf(w)
		r.procs.markRequested(key, id)
		if err := r.stop(w, id); err != nil {
			return err
		}
	}
	r.procs.forgetAll(key)
	if _, _, err := r.releaseHooks(ctx, w, "the worker was deleted"); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(w, WorkerFinalizer)
	return r.client.Update(ctx, w)
}

func condition(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

// conditionsFor derives the standard conditions from the phase.
func conditionsFor(w *v1.Worker, now time.Time) []metav1.Condition {
	alive := condition(v1.ConditionProcessAlive, metav1.ConditionFalse, v1.ReasonProcessExited, "no process is running")
	ready := condition(v1.ConditionReady, metav1.ConditionFalse, string(w.Status.Phase), "the worker is "+string(w.Status.Phase))
	if w.Status.Phase == v1.WorkerRunning {
		msg := fmt.Sprintf("pid %d on %s", w.Status.PID, w.Status.Host)
		alive = condition(v1.ConditionProcessAlive, metav1.ConditionTrue, v1.ReasonProcessRunning, msg)
		ready = condition(v1.ConditionReady, metav1.ConditionTrue, v1.ReasonProcessRunning, msg)
	}
	loop := condition(v1.ConditionCrashLoop, metav1.ConditionFalse, v1.ReasonWithinBudget,
		workerfsm.Budget(&w.Spec, &w.Status, now))
	if w.Status.Phase == v1.WorkerCrashLoop {
		loop = condition(v1.ConditionCrashLoop, metav1.ConditionTrue, v1.ReasonRestartsExhausted,
			fmt.Sprintf("%s; restart by hand with `tether worker restart %s -n %s`", workerfsm.Budget(&w.Spec, &w.Status, now), w.Name, w.Namespace))
	}
	if w.Status.Phase == "" || w.Status.Phase == v1.WorkerPending {
		if w.Spec.Template != nil || len(w.Spec.Command) == 0 && w.Spec.Adopt == nil {
			return []metav1.Condition{ready}
		}
	}
	return []metav1.Condition{ready, alive, loop}
}

func (r *WorkerReconciler) applyConditions(w *v1.Worker, extra []metav1.Condition) {
	for _, c := range append(conditionsFor(w, r.now()), extra...) {
		c.ObservedGeneration = w.Generation
		meta.SetStatusCondition(&w.Status.Conditions, c)
	}
	w.Status.ObservedGeneration = w.Generation
}

// writeStatus writes w's status with its conditions, guarded by its resourceVersion.
func (r *WorkerReconciler) writeStatus(ctx context.Context, w *v1.Worker, extra ...metav1.Condition) error {
	r.applyConditions(w, extra)
	if err := r.client.Status().Update(ctx, w); err != nil {
		return fmt.Errorf("writing the status of worker %s: %w", w.Name, err)
	}
	return nil
}

// writeStatusIfChanged writes the status only if the phase or a condition changed.
func (r *WorkerReconciler) writeStatusIfChanged(ctx context.Context, w *v1.Worker, extra ...metav1.Condition) error {
	before := w.Status.DeepCopy()
	r.applyConditions(w, extra)
	if equalStatus(before, &w.Status) {
		return nil
	}
	return r.writeStatus(ctx, w, extra...)
}

func equalStatus(a, b *v1.WorkerStatus) bool {
	if a.Phase != b.Phase || a.ObservedGeneration != b.ObservedGeneration || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for _, c := range b.Conditions {
		o := meta.FindStatusCondition(a.Conditions, c.Type)
		if o == nil || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message || o.ObservedGeneration != c.ObservedGeneration {
			return false
		}
	}
	return true
}
