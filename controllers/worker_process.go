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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/metrics"
	"github.com/tether-dev/tether/internal/worker/supervise"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

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
	if ok && p.next != nil && p.id != id {
		if p.next.id == id {
			// The crash record was stored though its write reported an error.
			if err := r.track(key, p.next, w); err != nil {
				return err
			}
		} else {
			// Status names a third process (a hand edit): the restarted
			// one would run unknown to status.
			r.abandon(p.next)
		}
		p, ok = r.procs.get(key)
	}
	if !ok || p.id != id {
		if err := r.procs.watch(key, id); err != nil {
			return err
		}
		p, _ = r.procs.get(key)
	}
	if p.exit != nil {
		return r.handleExit(ctx, w, p)
	}
	// Armed before any write, so that a crash right after a re-adoption
	// is restarted at its exit too.
	r.procs.arm(key, id, restartPlan(w))
	if w.Status.Phase == v1.WorkerRestarting && w.Spec.Adopt != nil {
		// An adopted process is only watched (docs/workers.md): a restart
		// request, which `tether worker restart` refuses, never stops it.
		if err := workerfsm.Apply(&w.Status, workerfsm.Started); err != nil {
			return r.refuseTransition(ctx, w, err)
		}
		return r.writeStatus(ctx, w)
	}
	if w.Status.Phase == v1.WorkerRestarting {
		// A person asked to restart a running process: stop it; its exit,
		// marked as requested, starts the new one.
		r.procs.markRequested(key, id)
		return r.stop(w, id)
	}
	if err := workerfsm.Apply(&w.Status, workerfsm.Alive); err != nil {
		return r.refuseTransition(ctx, w, err)
	}
	return r.writeStatusIfChanged(ctx, w)
}

// restartPlan is the copy of w that a crash of its process is decided on
// when the exit is delivered, or nil when that crash is left to the
// reconcile: w is not restarted automatically, is being deleted, or runs
// in tmux (whose session a launch replaces).
func restartPlan(w *v1.Worker) *v1.Worker {
	if !w.Spec.Restart.Auto || len(w.Spec.Command) == 0 || w.Spec.Adopt != nil || w.Spec.Tmux != nil || w.Spec.Template != nil || !w.DeletionTimestamp.IsZero() {
		return nil
	}
	return w.DeepCopy()
}

// restartAtExit starts the successor of a crashed process from plan, the
// Worker as last stored or seen with that process, if the restart policy
// restarts this crash. It runs when the exit is delivered, before any
// reconcile: the restart waits for no queue, cache read or store write.
// The reconcile then writes the crash record with this process, or, when
// this returns nil, decides itself.
func (r *WorkerReconciler) restartAtExit(plan *v1.Worker, exit supervise.Exit) *launched {
	if action, err := workerfsm.Plan(&plan.Spec, &plan.Status, processEnd(exit), r.now()); err != nil || action != workerfsm.ActionRestart {
		return nil
	}
	l, err := r.launch(context.Background(), plan, true, false)
	if err != nil {
		// The reconcile tries again and records the failure.
		return nil
	}
	failpointRestarted(l)
	return l
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
	exits   *supervise.ExitNotice
	logFile string
	tmux    string
	// found is set when the process was not started now but found by its
	// launch token: it may already be recorded by a write this reconcile
	// has not seen, so a failed write must not stop it.
	found bool
	// at is when the process was started or found.
	at time.Time
}

// agentEnv is the tether environment of w's agent: the names the
// reconciler sets itself, so that the agent never inherits them from
// `tether run`'s own environment.
var agentEnv = []string{config.HookEnv, config.WorkerEnv, config.NamespaceEnv, config.StoreEnv, config.ActorEnv}

// launch starts w's command. Its environment is the reconciler's own
// without agentEnv, then WorkerOptions.Env (TETHER_STORE on the local
// store), then TETHER_WORKER, TETHER_NAMESPACE, TETHER_ACTOR (worker/NAME,
// so that history names the Worker) and, when exactly one
// non-terminal Hook has w as its assignee, TETHER_HOOK; spec.env comes last.
//
// Launching is idempotent across a crash of tether run: the launch intent
// is a token in the process's environment (launchToken), and a process
// started with it but never recorded in status, because tether run died in
// between, is found by it and adopted instead of started a second time,
// when search is set.
func (r *WorkerReconciler) launch(ctx context.Context, w *v1.Worker, restart, search bool) (*launched, error) {
	l := &launched{logFile: filepath.Join(r.logDir, w.Namespace, w.Name+".log"), at: time.Now()}
	env := append(slices.Clone(r.env), config.WorkerEnv+"="+w.Name, config.NamespaceEnv+"="+w.Namespace,
		config.ActorEnv+"=worker/"+w.Name)
	if hook := r.assignedHook(ctx, w); hook != "" {
		env = append(env, config.HookEnv+"="+hook)
	}
	for _, e := range w.Spec.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	spec := supervise.LaunchSpec{Command: w.Spec.Command, Dir: w.Spec.Workdir, Env: env, Unset: agentEnv, LogFile: l.logFile}
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
		l.id, l.at = id, time.Now()
		return l, nil
	}
	spec.Token = launchToken(w, restart)
	if search {
		if found := r.findLaunched(ctx, w, restart); found != nil {
			return found, nil
		}
	}
	id, exits, err := supervise.Launch(spec)
	if err != nil {
		return nil, err
	}
	l.id, l.exits, l.at = id, exits, time.Now()
	return l, nil
}

// findLaunched returns the running process an earlier run of the
// reconciler started for this launch of w (launchToken) but did not
// record, or nil. A tmux pane carries no token.
func (r *WorkerReconciler) findLaunched(ctx context.Context, w *v1.Worker, restart bool) *launched {
	if w.Spec.Tmux != nil {
		return nil
	}
	id, ok := supervise.FindLaunched(launchToken(w, restart))
	if !ok || id == identityOf(w) {
		return nil
	}
	logr.FromContextOrDiscard(ctx).Info("adopting the unrecorded process of an earlier launch", "worker", w.Name, "process", id.String())
	return &launched{id: id, logFile: filepath.Join(r.logDir, w.Namespace, w.Name+".log"), found: true, at: time.Now()}
}

// launchToken names one launch of w: its UID and the launch's ordinal,
// status.restarts (which a launch records only once it has started), plus
// one for a restart. A launch that was never recorded gets the same token
// when it is retried; a later launch gets a new one, so the leftovers of an
// earlier process (a descendant in a session of its own) are never taken
// for it.
func launchToken(w *v1.Worker, restart bool) string {
	n := w.Status.Restarts
	if restart {
		n++
	}
	return string(w.UID) + "." + strconv.Itoa(int(n))
}

// assignedHook is the one non-terminal Hook whose spec.assignee is w, from
// the cache's assignee index; empty when there is none, several, or the
// list fails. It is a hint (the agent finds its Hook some other way without
// it), so a launch, and above all a restart after a crash, never waits on a
// read of every Hook from the store. A claim the cache has not seen yet is
// missed; the Worker was launched before it anyway.
func (r *WorkerReconciler) assignedHook(ctx context.Context, w *v1.Worker) string {
	hooks := &v1.HookList{}
	if err := r.client.List(ctx, hooks, client.InNamespace(w.Namespace), client.MatchingFields{HookAssigneeField: w.Name}); err != nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("launching without "+config.HookEnv+": the hooks assigned are unknown", "worker", w.Name, "error", err.Error())
		return ""
	}
	name := ""
	for i := range hooks.Items {
		h := &hooks.Items[i]
		if h.Spec.Assignee != w.Name || h.Status.State.IsTerminal() || !h.DeletionTimestamp.IsZero() {
			continue
		}
		if name != "" {
			return ""
		}
		name = h.Name
	}
	return name
}

// track makes the procTable follow a launched process, which w's status
// now records.
func (r *WorkerReconciler) track(key types.NamespacedName, l *launched, w *v1.Worker) error {
	if l.exits != nil {
		r.procs.child(key, l.id, l.exits)
	} else if err := r.procs.watch(key, l.id); err != nil {
		return err
	}
	r.procs.arm(key, l.id, restartPlan(w))
	return nil
}

// abandon stops a launched process whose status could not be recorded,
// so that no process runs unknown to status.
func (r *WorkerReconciler) abandon(l *launched) {
	if l.found {
		return
	}
	_ = supervise.Stop(l.id, r.grace)
	if l.tmux != "" {
		_ = supervise.KillTmuxSession(l.tmux)
	}
	if l.exits != nil {
		<-l.exits.C()
	}
}

// process is what status records of the process id on this host, started now.
func (r *WorkerReconciler) process(id supervise.Identity, logFile, tmux string) *workerfsm.Process {
	return &workerfsm.Process{
		PID: int32(id.PID), StartTicks: id.StartTicks, BootID: id.BootID, Host: r.host,
		LogFile: logFile, TmuxSession: tmux, StartedAt: metav1.NewTime(r.now()),
	}
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
		r.process(id, w.Status.LogFile, "").Record(&w.Status)
		if err := workerfsm.Apply(&w.Status, workerfsm.Started); err != nil {
			return r.refuseTransition(ctx, w, err)
		}
		if err := r.writeStatus(ctx, w); err != nil {
			return err
		}
		r.recorder.Eventf(w, nil, corev1.EventTypeNormal, EventWorkerStarted, "Adopt", "adopted %s", id)
		return r.procs.watch(key, id)
	}
	l, err := r.launch(ctx, w, manual, true)
	if err != nil {
		return r.startFailed(ctx, w, fmt.Errorf("launching %q: %w", w.Spec.Command[0], err))
	}
	r.process(l.id, l.logFile, l.tmux).Record(&w.Status)
	if err := workerfsm.Apply(&w.Status, workerfsm.Started); err != nil {
		r.abandon(l)
		return r.refuseTransition(ctx, w, err)
	}
	if manual {
		w.Status.Restarts++
	}
	if err := r.writeStatus(ctx, w); err != nil {
		r.abandon(l)
		return err
	}
	if manual {
		metrics.WorkerRestarts.Inc()
	}
	r.recorder.Eventf(w, nil, corev1.EventTypeNormal, EventWorkerStarted, "Launch", "started %s, logging to %s", l.id, l.logFile)
	return r.track(key, l, w)
}

func (r *WorkerReconciler) startFailed(ctx context.Context, w *v1.Worker, cause error) error {
	workerfsm.ClearProcess(&w.Status)
	if err := workerfsm.Apply(&w.Status, workerfsm.StartFailed); err != nil {
		return r.refuseTransition(ctx, w, err)
	}
	if err := r.writeStatus(ctx, w, condition(v1.ConditionProcessAlive, metav1.ConditionFalse, "StartFailed", cause.Error())); err != nil {
		return err
	}
	r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventStartFailed, "Start", "%v; fix the Worker and run `tether worker restart %s -n %s`", cause, w.Name, w.Namespace)
	return nil
}

// processEnd is the exit of a process in the terms of workerfsm: its crash
// record without the Hooks held, and whether it was clean.
func processEnd(exit supervise.Exit) workerfsm.End {
	rec := v1.CrashRecord{Time: metav1.NewTime(exit.Time), PID: int32(exit.Identity.PID), Reason: exit.Reason}
	switch exit.Reason {
	case supervise.ReasonExited:
		code := int32(exit.ExitCode)
		rec.ExitCode = &code
	case supervise.ReasonSignaled:
		sig := int32(exit.Signal)
		rec.Signal = &sig
	}
	return workerfsm.End{Record: rec, Clean: exit.Reason == supervise.ReasonExited && exit.ExitCode == 0}
}

// heldRead is the result of reading the Hooks a Worker holds.
type heldRead struct {
	held []v1.HeldHook
	err  error
}

// readHeld reads the Hooks w holds in the background (heldHooks).
func (r *WorkerReconciler) readHeld(ctx context.Context, w *v1.Worker) <-chan heldRead {
	reading := make(chan heldRead, 1)
	go func() {
		held, err := r.heldHooks(ctx, w)
		reading <- heldRead{held, err}
	}()
	return reading
}

// handleExit handles the end of p, the process recorded in w's status,
// once. It only does the I/O: workerfsm decides the restart (Plan) and the
// status after the exit (Exit). A crash is restarted before it is
// recorded: the new process starts as soon as the exit is seen, and the
// crash record, the restart and the new PID follow in one status write,
// guarded by resourceVersion, so a second attempt on a stale copy fails.
// Until that write succeeds the new process is kept in p.next and every
// retry records that same process; if tether run dies in between, the next
// run finds the process by its launch token (findLaunched) and records the
// crash and the restart then.
func (r *WorkerReconciler) handleExit(ctx context.Context, w *v1.Worker, p proc) error {
	exit := *p.exit
	if p.requested {
		return r.handleRequestedExit(ctx, w, exit)
	}
	key := client.ObjectKeyFromObject(w)
	end, now := processEnd(exit), r.now()
	action, planErr := workerfsm.Plan(&w.Spec, &w.Status, end, now)
	// The Hooks held are read around the cache, which reads the store,
	// while the new process starts: the record needs both and neither
	// waits for the other, so the restart is not delayed by the read.
	reading := r.readHeld(ctx, w)
	l, launchErr := r.successor(ctx, w, p, end.Clean, action, planErr)
	if l != nil {
		r.procs.setNext(key, exit.Identity, l)
	}
	read := <-reading
	if read.err != nil {
		return read.err
	}
	end.Record.Hook, end.Record.Held = heldNames(read.held), read.held
	var next *workerfsm.Successor
	if l != nil {
		next = &workerfsm.Successor{Process: r.process(l.id, l.logFile, l.tmux)}
	}
	out, err := workerfsm.Exit(&w.Spec, &w.Status, end, next, now)
	w.Status = *out.Status
	// The Hook reconciler may free the Hooks while this write is in
	// flight: an end costs one write before they are free, not two.
	r.exits.publish(w, out.Record.PID, read.held)
	if err != nil {
		return r.refuseExit(ctx, w, exit, l, err)
	}
	var extra []metav1.Condition
	if launchErr != nil {
		extra = append(extra, condition(v1.ConditionProcessAlive, metav1.ConditionFalse, "StartFailed", launchErr.Error()))
	}
	if err := r.writeStatus(ctx, w, extra...); err != nil {
		return err
	}
	r.exits.withdraw(key, out.Record.PID)
	r.procs.forget(key, exit.Identity)
	if !end.Clean {
		metrics.WorkerCrashed(exit.Reason)
	}
	var restartedAs string
	if l != nil {
		restartedAs = l.id.String()
		metrics.WorkerRestarted(exit.Time, l.at)
		if err := r.track(key, l, w); err != nil {
			return err
		}
	}
	logr.FromContextOrDiscard(ctx).Info("worker process ended", "worker", key, "exit", exit.String(), "phase", w.Status.Phase, "hooks", out.Record.Hook)
	r.emitEnd(w, exit, out.Record.Hook, out.Action, end.Clean, restartedAs, launchErr)
	return nil
}

// successor is the process that replaces the one p recorded after its
// crash: the one started when the exit was delivered, one an earlier run
// started and did not record, or one started now if the plan restarts
// it. Whatever the budget says now, a process that runs for this restart
// is recorded: that is the truth, and its crash counts like any other.
// launchErr says why a planned restart did not start.
func (r *WorkerReconciler) successor(ctx context.Context, w *v1.Worker, p proc, clean bool, action workerfsm.Action, planErr error) (l *launched, launchErr error) {
	l = p.next
	if l == nil && !clean && !p.seenAlive && planErr == nil {
		// This run never saw the process running: an earlier run may have
		// restarted it and died before the record.
		l = r.findLaunched(ctx, w, true)
	}
	if l != nil || action != workerfsm.ActionRestart {
		return l, nil
	}
	if l, launchErr = r.launch(ctx, w, true, false); launchErr != nil {
		return nil, launchErr
	}
	failpointRestarted(l)
	return l, nil
}

// handleRequestedExit handles the end of a process tether stopped: a
// `tether worker restart` starts its successor, a stop leaves the Worker
// Stopped.
func (r *WorkerReconciler) handleRequestedExit(ctx context.Context, w *v1.Worker, exit supervise.Exit) error {
	key := client.ObjectKeyFromObject(w)
	end := processEnd(exit)
	end.Requested = true
	out, err := workerfsm.Exit(&w.Spec, &w.Status, end, nil, r.now())
	w.Status = *out.Status
	switch {
	case err != nil:
		return r.refuseTransition(ctx, w, err)
	case w.Status.Phase == v1.WorkerRestarting:
		if err := r.start(ctx, w); err != nil {
			return err
		}
		if st := w.Status.StartedAt; st != nil && w.Status.PID != 0 {
			metrics.WorkerRestartLatency.Observe(max(0, st.Sub(exit.Time).Seconds()))
		}
	default:
		if err := r.writeStatus(ctx, w); err != nil {
			return err
		}
	}
	r.procs.forget(key, exit.Identity)
	return nil
}

// refuseExit records the exit of a process whose Worker's phase, set by
// hand, admits no such end (err): the process ended all the same, so the
// status records it, cleared and with its crash, keeping the phase, and
// the Ready condition and a Warning Event say why. A successor already
// started has no place in that status and is stopped.
func (r *WorkerReconciler) refuseExit(ctx context.Context, w *v1.Worker, exit supervise.Exit, l *launched, err error) error {
	key := client.ObjectKeyFromObject(w)
	refused, ok := r.transitionRefused(w, err)
	if !ok {
		return err
	}
	if err := r.writeStatus(ctx, w, refused); err != nil {
		return err
	}
	r.exits.withdraw(key, int32(exit.Identity.PID))
	if l != nil {
		r.abandon(l)
	}
	r.procs.forget(key, exit.Identity)
	if !processEnd(exit).Clean {
		metrics.WorkerCrashed(exit.Reason)
	}
	return nil
}

// emitEnd records the Events of an agent's end, a process's or a Pod's:
// restartedAs names what replaced it, startErr why nothing did.
func (r *WorkerReconciler) emitEnd(w *v1.Worker, end fmt.Stringer, held string, action workerfsm.Action, clean bool, restartedAs string, startErr error) {
	hooks := heldSummary(w, held)
	if clean {
		r.recorder.Eventf(w, nil, corev1.EventTypeNormal, EventWorkerStopped, "Exit", "%s; %s", end, hooks)
		return
	}
	budget := workerfsm.Budget(&w.Spec, &w.Status, r.now())
	switch {
	case restartedAs != "":
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "Restart", "%s; %s; restarted as %s (%s)", end, hooks, restartedAs, budget)
	case action == workerfsm.ActionNotifyOnly:
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "NotifyOnly", "%s; %s; not restarted: CrashLoop", end, hooks)
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventRestartsExhausted, "NotifyOnly",
			"restarts exhausted: %s (maxCrashes %d); restart it by hand with `tether worker restart %s -n %s`",
			budget, workerfsm.MaxCrashes(&w.Spec), w.Name, w.Namespace)
	case startErr != nil:
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "Restart", "%s; %s; restart failed: %v", end, hooks, startErr)
	default:
		r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerCrashed, "NotifyOnly",
			"%s; %s; not restarted (spec.restart.auto is off); restart it by hand with `tether worker restart %s -n %s`", end, hooks, w.Name, w.Namespace)
	}
}

// reconcileHeartbeat judges a Worker this host cannot see by its
// heartbeat, like a node lease: once status.lastHeartbeat is older than
// spec.heartbeatTimeout the Worker is Lost and its Hooks are freed.
func (r *WorkerReconciler) reconcileHeartbeat(ctx context.Context, w *v1.Worker) (ctrl.Result, error) {
	now := r.now()
	switch workerfsm.HeartbeatEvent(&w.Spec, &w.Status, now) {
	case workerfsm.AwaitingHeartbeat:
		if err := workerfsm.Apply(&w.Status, workerfsm.AwaitingHeartbeat); err != nil {
			return ctrl.Result{}, r.refuseTransition(ctx, w, err)
		}
		return ctrl.Result{}, r.writeStatusIfChanged(ctx, w)
	case workerfsm.Heartbeat:
		if err := workerfsm.Apply(&w.Status, workerfsm.Heartbeat); err != nil {
			return ctrl.Result{}, r.refuseTransition(ctx, w, err)
		}
		due := workerfsm.HeartbeatDue(&w.Spec, &w.Status)
		return ctrl.Result{RequeueAfter: due.Sub(now)}, r.writeStatusIfChanged(ctx, w)
	}
	if w.Status.Phase == v1.WorkerLost {
		return ctrl.Result{}, r.writeStatusIfChanged(ctx, w)
	}
	why := fmt.Sprintf("no heartbeat from host %s since %s", w.Status.Host, w.Status.LastHeartbeat.UTC().Format(time.RFC3339))
	held, err := r.heldHooks(ctx, w)
	if err != nil {
		return ctrl.Result{}, err
	}
	rec := v1.CrashRecord{Time: metav1.NewTime(now), PID: w.Status.PID, Reason: ReasonHeartbeatExpired, Hook: heldNames(held), Held: held}
	if err := workerfsm.Apply(&w.Status, workerfsm.HeartbeatExpired); err != nil {
		return ctrl.Result{}, r.refuseTransition(ctx, w, err)
	}
	workerfsm.AppendCrash(&w.Status, rec)
	if err := r.writeStatus(ctx, w); err != nil {
		return ctrl.Result{}, err
	}
	metrics.WorkerCrashed(ReasonHeartbeatExpired)
	r.recorder.Eventf(w, nil, corev1.EventTypeWarning, EventWorkerLost, "Heartbeat", "%s (heartbeatTimeout %s); %s", why, workerfsm.HeartbeatTimeout(&w.Spec), heldSummary(w, rec.Hook))
	return ctrl.Result{}, nil
}

// heldHooks lists the Hooks w holds, with their generations, reading around
// the cache so that a claim made just before the death is in the record.
// It only reads Hooks: the Hook reconciler frees them.
func (r *WorkerReconciler) heldHooks(ctx context.Context, w *v1.Worker) ([]v1.HeldHook, error) {
	hooks := &v1.HookList{}
	if err := r.reader.List(ctx, hooks, client.InNamespace(w.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the hooks of worker %s: %w", w.Name, err)
	}
	var held []v1.HeldHook
	for i := range hooks.Items {
		if h := &hooks.Items[i]; h.Spec.Assignee == w.Name {
			held = append(held, v1.HeldHook{Name: h.Name, Generation: h.Generation})
		}
	}
	slices.SortFunc(held, func(a, b v1.HeldHook) int { return strings.Compare(a.Name, b.Name) })
	if len(held) > v1.WorkerHeldLimit {
		held = held[:v1.WorkerHeldLimit]
	}
	return held, nil
}

// heldNames joins the names of held, for crash records and messages.
func heldNames(held []v1.HeldHook) string {
	names := make([]string, len(held))
	for i, h := range held {
		names[i] = h.Name
	}
	return strings.Join(names, ",")
}

// heldSummary says, for an Event, which Hooks w held and what becomes of them.
func heldSummary(w *v1.Worker, hooks string) string {
	switch {
	case hooks == "":
		return "it held no hook"
	case workerfsm.ClearsAssignee(w):
		return "it held hook " + hooks + " (freed by the hook controller: assignee cleared; a hook at work moves to recovering, a finished one keeps its state)"
	default:
		return "it held hook " + hooks + " (kept: spec.clearAssigneeOnCrash is false)"
	}
}
