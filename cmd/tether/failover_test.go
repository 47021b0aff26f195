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
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// failoverFlags make a killed leader's Lease expire in seconds.
var failoverFlags = []string{
	"--leader-elect",
	"--leader-elect-lease-duration=" + failoverLease.String(),
	"--leader-elect-renew-deadline=3s",
	"--leader-elect-retry-period=" + failoverRetry.String(),
}

// The takeover bounds leave seconds of margin, for a loaded 2-core
// machine: a released Lease is taken within a retry period (about 0.1-0.7s
// measured), an expired one within the lease duration plus a retry period.
const (
	failoverLease           = 5 * time.Second
	failoverRetry           = 250 * time.Millisecond
	maxTakeoverAfterSIGTERM = 3 * time.Second
	maxTakeoverAfterSIGKILL = failoverLease + failoverRetry + 3*time.Second
)

const (
	failoverWorkers       = 2
	failoverHookSteps     = 4
	failoverHookDrivers   = 3 // stepping Hooks driven at once
	failoverPhaseCrashes  = 2 // crashes per Worker before each kill, and after the last
	failoverTimeout       = 90 * time.Second
	failoverWorkerPrefix  = "fo-agent-"
	failoverHeldPrefix    = "fo-held-"
	failoverSteppedPrefix = "fo-step-"
)

// failoverRun is the state shared by the load drivers and the test.
type failoverRun struct {
	t    *testing.T
	env  *testenv.Env
	home string

	mu      sync.Mutex
	errs    []string
	crashes map[string]int // per Worker, crashes played
	stepped []string       // stepping Hooks created
	done    int            // stepping Hooks completed
	handled []time.Duration
	// played receives, without blocking, each time a crash is played.
	played chan struct{}
	stop   chan struct{}
}

func (f *failoverRun) errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *failoverRun) failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errs) > 0
}

func (f *failoverRun) stopped() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// tether runs a verb on the cluster, as an agent in dir would.
func (f *failoverRun) tether(dir string, args ...string) error {
	cmd := exec.Command(tetherBin, append(args, "--cluster", "--kubeconfig", f.env.Kubeconfig, "-n", "default")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TETHER_HOME="+f.home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("tether %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// poll waits until cond holds for the object named name, up to the
// generous failover timeout.
func poll[T client.Object](f *failoverRun, obj T, name, what string, cond func(T) bool) bool {
	deadline := time.Now().Add(failoverTimeout)
	for {
		err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, obj)
		if err == nil && cond(obj) {
			return true
		}
		if time.Now().After(deadline) {
			f.errorf("%s: never %s within %v (last error %v)", name, what, failoverTimeout, err)
			return false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// stepHook creates a Hook, waits for the operator to initialize it, and
// works all its steps through the agent verbs of the binary.
func (f *failoverRun) stepHook(name string) {
	ws := f.t.TempDir()
	steps := make([]v1.Step, failoverHookSteps)
	for i := range steps {
		steps[i] = step(fmt.Sprintf("s%d", i), 0, "true")
	}
	hook := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.HookSpec{Goal: "stepped through failovers", Workspace: ws, Steps: steps},
	}
	if err := f.env.Client.Create(context.Background(), hook); err != nil {
		f.errorf("creating hook %s: %v", name, err)
		return
	}
	if !poll(f, &v1.Hook{}, name, "initialized", func(h *v1.Hook) bool { return h.Status.State == v1.HookStepPending }) {
		return
	}
	for range steps {
		for _, verb := range []string{"begin", "done"} {
			if err := f.tether(ws, "step", verb, name); err != nil {
				f.errorf("hook %s: %v", name, err)
				return
			}
		}
	}
	f.mu.Lock()
	f.done++
	f.mu.Unlock()
}

// setPod plays the kubelet on a Worker's Pod.
func (f *failoverRun) setPod(name string, phase corev1.PodPhase, state corev1.ContainerState) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, pod); err != nil {
			return err
		}
		pod.Status.Phase = phase
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: pod.Spec.Containers[0].Image, State: state}}
		return f.env.Client.Status().Update(context.Background(), pod)
	})
}

// crashWorker runs a Worker's Pods and crashes each while the Worker holds
// its Hook: the operator records the crash, restarts the Worker as the
// next Pod and frees the Hook, which the driver resumes and claims again.
func (f *failoverRun) crashWorker(worker, held string, ws string) {
	for k := 0; ; k++ {
		pod := fmt.Sprintf("%s-%d", worker, k)
		if !poll(f, &v1.Worker{}, worker, "created pod "+pod, func(w *v1.Worker) bool { return w.Status.PodName == pod }) {
			return
		}
		if f.stopped() {
			return
		}
		if err := f.setPod(pod, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}); err != nil {
			f.errorf("running pod %s: %v", pod, err)
			return
		}
		if !poll(f, &v1.Worker{}, worker, "Running on "+pod, func(w *v1.Worker) bool { return w.Status.Phase == v1.WorkerRunning }) {
			return
		}
		if err := f.tether(ws, "claim", held, "--worker", worker); err != nil {
			f.errorf("%v", err)
			return
		}
		now := metav1.Now()
		if err := f.setPod(pod, corev1.PodFailed, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Signal: 9, Reason: "Error", StartedAt: now, FinishedAt: now,
		}}); err != nil {
			f.errorf("crashing pod %s: %v", pod, err)
			return
		}
		playedAt := time.Now()
		f.mu.Lock()
		f.crashes[worker]++
		f.mu.Unlock()
		select {
		case f.played <- struct{}{}:
		default:
		}
		next := fmt.Sprintf("%s-%d", worker, k+1)
		if !poll(f, &v1.Worker{}, worker, "restarted as "+next, func(w *v1.Worker) bool { return w.Status.PodName == next }) {
			return
		}
		if !poll(f, &v1.Hook{}, held, "freed by "+worker, func(h *v1.Hook) bool {
			return h.Spec.Assignee == "" && h.Status.State == v1.HookRecovering
		}) {
			return
		}
		f.mu.Lock()
		f.handled = append(f.handled, time.Since(playedAt))
		f.mu.Unlock()
		if err := f.tether(ws, "resume", held); err != nil {
			f.errorf("%v", err)
			return
		}
	}
}

// podWatch watches the Workers' Pods: every Pod name ever created, and any
// moment at which a Worker had two live (not ended, not deleted) Pods.
type podWatch struct {
	mu      sync.Mutex
	created map[string]map[string]bool // worker -> pod names
	live    map[string]map[string]bool
	doubles []string
}

func (p *podWatch) observe(ev watch.Event) {
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	worker := pod.Labels[controllers.WorkerLabel]
	if worker == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.created[worker] == nil {
		p.created[worker], p.live[worker] = map[string]bool{}, map[string]bool{}
	}
	p.created[worker][pod.Name] = true
	ended := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded || !pod.DeletionTimestamp.IsZero()
	if ev.Type == watch.Deleted || ended {
		delete(p.live[worker], pod.Name)
		return
	}
	p.live[worker][pod.Name] = true
	if len(p.live[worker]) > 1 {
		names := make([]string, 0, len(p.live[worker]))
		for n := range p.live[worker] {
			names = append(names, n)
		}
		slices.Sort(names)
		p.doubles = append(p.doubles, fmt.Sprintf("worker %s had live pods %v at once", worker, names))
	}
}

func (p *podWatch) run(ctx context.Context, f *failoverRun) {
	for ctx.Err() == nil {
		w, err := f.env.Client.Watch(ctx, &corev1.PodList{}, client.InNamespace("default"))
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			p.observe(ev)
		}
		w.Stop()
	}
}

// waitReady waits for an operator's readiness probe.
func waitReady(t *testing.T, probe string, output *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://%s/readyz", probe))
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operator never became ready:\n%s", output.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterFailoverUnderLoad runs two `tether run --cluster
// --leader-elect` replicas while Hooks are stepped through the agent verbs
// and Workers' Pods crash, and kills the leader twice: with SIGTERM (the
// Lease is released) and with SIGKILL (it expires), then pauses one with
// SIGSTOP until a standby leads and resumes it. No transition is lost
// or applied twice, every crash is handled exactly once, and no Worker
// ever has two live Pods.
func TestClusterFailoverUnderLoad(t *testing.T) {
	env := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type operator struct {
		cmd    *exec.Cmd
		output *syncBuffer
	}
	var operators []operator
	start := func() operator {
		probe := freeAddr(t)
		cmd, output := startOperator(t, env, nil, append(failoverFlags, "--health-probe-bind-address", probe)...)
		waitReady(t, probe, output)
		op := operator{cmd, output}
		operators = append(operators, op)
		return op
	}
	defer func() {
		if t.Failed() {
			for i, op := range operators {
				t.Logf("operator %d output:\n%s", i, op.output.String())
			}
		}
	}()
	waitHolder := func(what string, cond func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if h := leaseHolder(t, env); cond(h) {
				return h
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the Lease holder is %q after 60s", what, leaseHolder(t, env))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	leader := start()
	holder := waitHolder("a leader", func(h string) bool { return h != "" })
	standby := start()

	f := &failoverRun{
		t: t, env: env, home: t.TempDir(),
		crashes: map[string]int{},
		played:  make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	pods := &podWatch{created: map[string]map[string]bool{}, live: map[string]map[string]bool{}}
	go pods.run(ctx, f)

	var wg sync.WaitGroup
	heldWS := t.TempDir()
	for i := range failoverWorkers {
		worker, held := fmt.Sprintf("%s%d", failoverWorkerPrefix, i), fmt.Sprintf("%s%d", failoverHeldPrefix, i)
		hook := &v1.Hook{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: held},
			Spec:       v1.HookSpec{Goal: "held by a crashing worker", Workspace: heldWS, Steps: []v1.Step{step("only", 0, "true")}},
		}
		if err := env.Client.Create(ctx, hook); err != nil {
			t.Fatal(err)
		}
		if !poll(f, &v1.Hook{}, held, "initialized", func(h *v1.Hook) bool { return h.Status.State == v1.HookStepPending }) {
			t.Fatal(f.errs)
		}
		grace := int64(0)
		w := &v1.Worker{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: worker},
			Spec: v1.WorkerSpec{
				Restart: v1.RestartPolicy{Auto: true, MaxCrashes: 100, Window: &metav1.Duration{Duration: time.Hour}},
				Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					Containers:                    []corev1.Container{{Name: "agent", Image: "example.invalid/agent:1"}},
				}},
			},
		}
		if err := env.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); f.crashWorker(worker, held, heldWS) }()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		sem := make(chan struct{}, failoverHookDrivers)
		var drivers sync.WaitGroup
		defer drivers.Wait()
		for i := 0; !f.stopped(); i++ {
			select {
			case sem <- struct{}{}:
			case <-f.stop:
				return
			}
			name := fmt.Sprintf("%s%d", failoverSteppedPrefix, i)
			f.mu.Lock()
			f.stepped = append(f.stepped, name)
			f.mu.Unlock()
			drivers.Add(1)
			go func() { defer drivers.Done(); defer func() { <-sem }(); f.stepHook(name) }()
			time.Sleep(300 * time.Millisecond)
		}
	}()

	// progress waits until every Worker had at least n crashes played.
	progress := func(n int) {
		t.Helper()
		deadline := time.Now().Add(3 * failoverTimeout)
		for {
			f.mu.Lock()
			least := n
			for i := range failoverWorkers {
				least = min(least, f.crashes[fmt.Sprintf("%s%d", failoverWorkerPrefix, i)])
			}
			f.mu.Unlock()
			if least >= n {
				return
			}
			if f.failed() || time.Now().After(deadline) {
				close(f.stop)
				wg.Wait()
				t.Fatalf("the load stalled before %d crashes per worker: %v", n, f.errs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// kill kills the leader just after a crash was played, so that the
	// crash is pending while no replica leads, and measures the takeover.
	kill := func(op operator, sig syscall.Signal, old string) (string, time.Duration) {
		t.Helper()
		select {
		case <-f.played:
		default:
		}
		select {
		case <-f.played:
		case <-time.After(failoverTimeout):
			t.Fatal("no crash was played")
		}
		killed := time.Now()
		if err := op.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		next := waitHolder("failover after "+sig.String(), func(h string) bool { return h != "" && h != old })
		took := time.Since(killed)
		waited := make(chan error, 1)
		go func() { waited <- op.cmd.Wait() }()
		select {
		case err := <-waited:
			if sig == syscall.SIGTERM && err != nil {
				t.Errorf("the leader exited with %v after SIGTERM", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the leader did not exit within 30s of %v", sig)
		}
		return next, took
	}

	progress(failoverPhaseCrashes)
	holder, termTook := kill(leader, syscall.SIGTERM, holder)
	t.Logf("SIGTERM: the standby took the Lease %v after the leader's SIGTERM", termTook.Round(time.Millisecond))
	if termTook > maxTakeoverAfterSIGTERM {
		t.Errorf("the standby took the Lease %v after the leader's SIGTERM, want at most %v: was the Lease released?", termTook, maxTakeoverAfterSIGTERM)
	}
	leader = standby
	standby = start()

	progress(2 * failoverPhaseCrashes)
	_, killTook := kill(leader, syscall.SIGKILL, holder)
	t.Logf("SIGKILL: the standby took the Lease %v after the leader's SIGKILL (lease duration %v)", killTook.Round(time.Millisecond), failoverLease)
	if killTook > maxTakeoverAfterSIGKILL {
		t.Errorf("the standby took the Lease %v after the leader's SIGKILL, want at most %v (lease duration + retry period + margin)", killTook, maxTakeoverAfterSIGKILL)
	}

	// A leader paused (a frozen VM, a long GC) keeps its Lease until it
	// expires, and, resumed, reconciles from its old cache for up to the
	// renew deadline before it finds the Lease gone and exits: each of its
	// writes must conflict with the new leader's or do the same, not twice.
	paused := standby
	start()
	progress(3 * failoverPhaseCrashes)
	defer func() { _ = paused.cmd.Process.Signal(syscall.SIGCONT) }()
	select {
	case <-f.played:
	default:
	}
	<-f.played
	stoppedAt := time.Now()
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	pausedHolder := leaseHolder(t, env)
	waitHolder("failover after SIGSTOP", func(h string) bool { return h != "" && h != pausedHolder })
	t.Logf("SIGSTOP: the standby took the Lease %v after the leader was paused", time.Since(stoppedAt).Round(time.Millisecond))
	progress(3*failoverPhaseCrashes + 1)
	resumed, before := time.Now(), len(paused.output.String())
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- paused.cmd.Wait() }()
	select {
	case err := <-exited:
		after := paused.output.String()[before:]
		t.Logf("SIGCONT: the paused leader, resumed, exited %v later (%v); meanwhile it logged %d pod ends and %d reconcile errors",
			time.Since(resumed).Round(time.Millisecond), err, strings.Count(after, "worker pod ended"), strings.Count(after, "Reconciler error"))
	case <-time.After(30 * time.Second):
		t.Errorf("the paused leader, resumed, still runs 30s later without the Lease")
	}

	progress(4*failoverPhaseCrashes + 1)
	close(f.stop)
	wg.Wait()
	if len(f.errs) > 0 {
		t.Fatalf("the load failed:\n%s", strings.Join(f.errs, "\n"))
	}
	slices.Sort(f.handled)
	t.Logf("load: %d hooks stepped to completion (%d steps each), %v crashes played; crash handled in median %v, max %v",
		f.done, failoverHookSteps, f.crashes, f.handled[len(f.handled)/2].Round(time.Millisecond), f.handled[len(f.handled)-1].Round(time.Millisecond))

	f.checkStepped(t)
	// Let the operator settle, then check the Workers and held Hooks.
	time.Sleep(time.Second)
	f.checkWorkers(t, pods)
}

// checkStepped checks that each stepping Hook's history records every
// transition the agent verbs drove exactly once, in order.
func (f *failoverRun) checkStepped(t *testing.T) {
	t.Helper()
	want := []string{"initialize/initializing->step_pending"}
	for i := range failoverHookSteps {
		// A pass moves to the next step, or completes on the last.
		pass := fmt.Sprintf("pass/step_validating->step_pending@%d", i+1)
		if i == failoverHookSteps-1 {
			pass = fmt.Sprintf("pass/step_validating->completed@%d", i)
		}
		want = append(want,
			fmt.Sprintf("begin/step_pending->step_running@%d", i),
			fmt.Sprintf("validate/step_running->step_validating@%d", i),
			pass)
	}
	for _, name := range f.stepped {
		h := &v1.Hook{}
		if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			t.Fatal(err)
		}
		if h.Status.State != v1.HookCompleted {
			t.Errorf("hook %s is %s, want completed", name, h.Status.State)
		}
		got := historyOf(h)
		// The initialize entry carries no step; the others carry theirs.
		for i := range got {
			if i == 0 {
				got[i] = strings.SplitN(got[i], "@", 2)[0]
			}
		}
		if h.Status.HistoryDropped != 0 || !slices.Equal(got, want) {
			t.Errorf("hook %s: history (dropped %d)\n  %v\nwant each transition once:\n  %v", name, h.Status.HistoryDropped, got, want)
		}
	}
}

func historyOf(h *v1.Hook) []string {
	var got []string
	for _, e := range h.Status.History {
		got = append(got, fmt.Sprintf("%s/%s->%s@%d", e.Event, e.From, e.To, e.Step))
	}
	return got
}

// checkWorkers checks that each crash played was handled exactly once: one
// crash record, one restart, one new Pod, one interruption and one
// assignee clearing of the held Hook.
func (f *failoverRun) checkWorkers(t *testing.T, pods *podWatch) {
	t.Helper()
	ctx := context.Background()
	events := &corev1.EventList{}
	if err := f.env.Client.List(ctx, events, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	count := func(name, reason string) int32 {
		var n int32
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason {
				n += max(e.Count, 1)
			}
		}
		return n
	}
	pods.mu.Lock()
	defer pods.mu.Unlock()
	for _, d := range pods.doubles {
		t.Errorf("duplicate pods: %s", d)
	}
	for i := range failoverWorkers {
		name, held := fmt.Sprintf("%s%d", failoverWorkerPrefix, i), fmt.Sprintf("%s%d", failoverHeldPrefix, i)
		played := f.crashes[name]
		w := &v1.Worker{}
		if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, w); err != nil {
			t.Fatal(err)
		}
		if len(w.Status.Crashes) != played || int(w.Status.Restarts) != played {
			t.Errorf("worker %s: %d crash records, %d restarts; %d crashes played", name, len(w.Status.Crashes), w.Status.Restarts, played)
		}
		for j, rec := range w.Status.Crashes {
			if !rec.Restarted || rec.Reason != "Signaled" || rec.Hook != held {
				t.Errorf("worker %s: crash record %d is %+v; want Signaled, restarted, holding %s", name, j, rec, held)
			}
		}
		if want := fmt.Sprintf("%s-%d", name, played); w.Status.PodName != want {
			t.Errorf("worker %s runs pod %q, want %s", name, w.Status.PodName, want)
		}
		var created []string
		for p := range pods.created[name] {
			created = append(created, p)
		}
		slices.Sort(created)
		var want []string
		for k := 0; k <= played; k++ {
			want = append(want, fmt.Sprintf("%s-%d", name, k))
		}
		slices.Sort(want)
		if !slices.Equal(created, want) {
			t.Errorf("worker %s: pods created %v, want exactly %v", name, created, want)
		}
		list := &corev1.PodList{}
		if err := f.env.Client.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{controllers.WorkerLabel: name}); err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, p := range list.Items {
			if p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded && p.DeletionTimestamp.IsZero() {
				live++
			}
		}
		if live != 1 {
			t.Errorf("worker %s has %d live pods, want 1", name, live)
		}

		h := &v1.Hook{}
		if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: held}, h); err != nil {
			t.Fatal(err)
		}
		wantHistory := []string{"initialize/initializing->step_pending@0"}
		for range played {
			wantHistory = append(wantHistory, "interrupt/step_pending->recovering@0", "resume/recovering->step_pending@0")
		}
		if got := historyOf(h); !slices.Equal(got, wantHistory) {
			t.Errorf("hook %s: history\n  %v\nwant one interruption and one resume per crash (%d):\n  %v", held, got, played, wantHistory)
		}
		crashedEvents, lostEvents := count(name, controllers.EventWorkerCrashed), count(held, controllers.EventAssigneeLost)
		t.Logf("worker %s: %d crashes played, %d crash records, %d restarts, pods %v; %d WorkerCrashed and %d AssigneeLost Events",
			name, played, len(w.Status.Crashes), w.Status.Restarts, created, crashedEvents, lostEvents)
		// An Event may be lost with a killed leader, never recorded twice.
		if int(crashedEvents) > played || int(lostEvents) > played {
			t.Errorf("worker %s: %d WorkerCrashed and %d AssigneeLost Events for %d crashes", name, crashedEvents, lostEvents, played)
		}
	}
}
