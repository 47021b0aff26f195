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
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// workerEnv is one store with a client of its own, as a second process
// next to the tether binaries the test runs.
type workerEnv struct {
	t     testing.TB
	dir   string
	c     client.WithWatch
	run   *exec.Cmd
	out   *syncBuffer
	mu    sync.Mutex
	pids  []int
	label string
	// runArgs are added to `tether run`'s arguments.
	runArgs []string
	// runEnv is added to `tether run`'s environment.
	runEnv []string
	// runBin is the binary `tether run` starts; empty is tetherBin.
	runBin string
}

func newWorkerEnv(t testing.TB) *workerEnv {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	e := &workerEnv{t: t, dir: dir, c: openStore(t, dir).Client(), label: fmt.Sprintf("%d", time.Now().UnixNano()%1000000)}
	t.Cleanup(func() {
		e.stopRun()
		// Workers outlive tether run by design: end every process the test saw.
		ws := &v1.WorkerList{}
		if err := e.c.List(context.Background(), ws); err == nil {
			for _, w := range ws.Items {
				e.pids = append(e.pids, int(w.Status.PID))
			}
		}
		for _, pid := range e.pids {
			if pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return e
}

// tether runs the binary on the env's store.
func (e *workerEnv) tether(args ...string) (string, string, int) {
	e.t.Helper()
	return run(e.t, append([]string{"--store", e.dir}, args...)...)
}

func (e *workerEnv) startRun() {
	e.t.Helper()
	e.out = &syncBuffer{}
	e.run = exec.Command(cmp.Or(e.runBin, tetherBin), append([]string{"run", "--store", e.dir}, e.runArgs...)...)
	e.run.Stdout, e.run.Stderr = e.out, e.out
	if len(e.runEnv) > 0 {
		e.run.Env = append(os.Environ(), e.runEnv...)
	}
	if err := e.run.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor(20*time.Second, "tether run to start", func() bool { return strings.Contains(e.out.String(), "serving the local store") })
}

func (e *workerEnv) stopRun() {
	if e.run == nil {
		return
	}
	_ = e.run.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = e.run.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = e.run.Process.Kill()
		<-done
		e.t.Errorf("tether run did not stop within 15s of SIGTERM")
	}
	e.run = nil
}

func (e *workerEnv) waitFor(timeout time.Duration, what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			log := ""
			if e.out != nil {
				log = e.out.String()
			}
			e.t.Fatalf("timed out after %s waiting for %s\ntether run output:\n%s", timeout, what, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *workerEnv) create(obj client.Object) {
	e.t.Helper()
	obj.SetNamespace("default")
	if err := e.c.Create(context.Background(), obj); err != nil {
		e.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

func (e *workerEnv) worker(name string) *v1.Worker {
	e.t.Helper()
	w := &v1.Worker{}
	if err := e.c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: name}, w); err != nil {
		e.t.Fatal(err)
	}
	if w.Status.PID > 0 {
		e.mu.Lock()
		e.pids = append(e.pids, int(w.Status.PID))
		e.mu.Unlock()
	}
	return w
}

func (e *workerEnv) hook(name string) *v1.Hook {
	e.t.Helper()
	h := &v1.Hook{}
	if err := e.c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: name}, h); err != nil {
		e.t.Fatal(err)
	}
	return h
}

// events returns the Events about the object name with reason.
func (e *workerEnv) events(name, reason string) []corev1.Event {
	e.t.Helper()
	list := &corev1.EventList{}
	if err := e.c.List(context.Background(), list, client.InNamespace("default")); err != nil {
		e.t.Fatal(err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == name && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

// waitRunning waits until the Worker runs a process other than notPID and returns it.
func (e *workerEnv) waitRunning(name string, notPID int32) *v1.Worker {
	e.t.Helper()
	var w *v1.Worker
	e.waitFor(20*time.Second, fmt.Sprintf("worker %s to run a new process", name), func() bool {
		w = e.worker(name)
		return w.Status.Phase == v1.WorkerRunning && w.Status.PID != 0 && w.Status.PID != notPID
	})
	if alive, err := identityOf(w).Alive(); err != nil || !alive {
		e.t.Fatalf("worker %s reports pid %d, which is not running (%v)", name, w.Status.PID, err)
	}
	return w
}

func identityOf(w *v1.Worker) supervise.Identity {
	return supervise.Identity{PID: int(w.Status.PID), StartTicks: w.Status.ProcessStartTicks, BootID: w.Status.BootID}
}

func kill9(t testing.TB, pid int32) {
	t.Helper()
	if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
}

func sleeper(name string, seconds int, auto bool) *v1.Worker {
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: name}}
	w.Spec.Command = []string{"sh", "-c", fmt.Sprintf("echo worker=$TETHER_WORKER store=${TETHER_STORE:+set}; exec sleep %d", seconds)}
	w.Spec.Restart.Auto = auto
	return w
}

// processesRunning counts the processes whose argv is exactly argv.
func processesRunning(t *testing.T, argv ...string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(argv, "\x00") + "\x00"
	n := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(data) == want {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
				n++
			}
		}
	}
	return n
}

// TestWorkerRestartsWithinItsBudget kills a supervised `sleep` with
// SIGKILL three times: with maxCrashes 3, crashes 1 and 2 are restarted and
// crash 3 is not (CrashLoop); then a manual restart.
func TestWorkerRestartsWithinItsBudget(t *testing.T) {
	e := newWorkerEnv(t)
	e.create(sleeper("agent", 100001, true))
	e.startRun()
	w := e.waitRunning("agent", 0)
	if w.Status.LogFile == "" || w.Status.Host == "" || w.Status.ProcessStartTicks == 0 || w.Status.BootID == "" {
		t.Fatalf("status lacks log file, host or process identity: %+v", w.Status)
	}
	e.waitFor(10*time.Second, "the log to show the agent's output", func() bool {
		out, _, _ := e.tether("logs", "worker/agent")
		return strings.Contains(out, "worker=agent store=set")
	})

	for i := 1; i <= 3; i++ {
		old := w.Status.PID
		kill9(t, old)
		e.waitFor(10*time.Second, fmt.Sprintf("crash %d to be recorded", i), func() bool {
			w = e.worker("agent")
			return len(w.Status.Crashes) == i
		})
		c := w.Status.Crashes[i-1]
		if c.PID != old || c.Reason != supervise.ReasonSignaled || c.Signal == nil || *c.Signal != 9 {
			t.Fatalf("crash %d = %+v; want pid %d killed by signal 9", i, c, old)
		}
		if i < 3 {
			if !c.Restarted {
				t.Fatalf("crash %d was not restarted: %+v", i, c)
			}
			w = e.waitRunning("agent", old)
			continue
		}
		if c.Restarted || w.Status.Phase != v1.WorkerCrashLoop || w.Status.PID != 0 {
			t.Fatalf("3rd crash: phase %s pid %d restarted %v; want CrashLoop, no process", w.Status.Phase, w.Status.PID, c.Restarted)
		}
		if cond := meta.FindStatusCondition(w.Status.Conditions, v1.ConditionCrashLoop); cond == nil || cond.Status != metav1.ConditionTrue ||
			cond.ObservedGeneration != w.Generation || !strings.HasPrefix(cond.Message, "3 crashes in 10m0s;") {
			t.Fatalf("CrashLoop condition = %+v; want True, saying 3 crashes in 10m0s", cond)
		}
	}
	if n := len(e.events("agent", "WorkerCrashed")); n < 1 {
		t.Fatal("no WorkerCrashed Event")
	}
	e.waitFor(10*time.Second, "a RestartsExhausted Event naming the manual restart", func() bool {
		for _, ev := range e.events("agent", "RestartsExhausted") {
			if ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, "3 crashes in 10m0s") && strings.Contains(ev.Message, "tether worker restart agent") {
				return true
			}
		}
		return false
	})
	if w.Status.Restarts != 2 {
		t.Fatalf("restarts = %d, want 2", w.Status.Restarts)
	}

	out, stderr, code := e.tether("worker", "restart", "agent")
	if code != 0 || !strings.Contains(out, "worker.agents.tether.dev/agent restarted") {
		t.Fatalf("worker restart: exit %d, %q %q", code, out, stderr)
	}
	w = e.waitRunning("agent", 0)
	if w.Status.Restarts != 3 || w.Status.WindowStart == nil {
		t.Fatalf("after worker restart: restarts %d, windowStart %v", w.Status.Restarts, w.Status.WindowStart)
	}
	for i, c := range w.Status.Crashes {
		if !c.Forgiven {
			t.Fatalf("crash %d (pid %d) before the manual restart is not marked forgiven", i+1, c.PID)
		}
	}
	// The manual restart reset the window: the next crash is restarted again.
	old := w.Status.PID
	kill9(t, old)
	w = e.waitRunning("agent", old)
	if c := w.Status.Crashes[len(w.Status.Crashes)-1]; !c.Restarted {
		t.Fatalf("a crash after a manual restart was not restarted: %+v", c)
	}

	if _, stderr, code := e.tether("worker", "restart", "nobody"); code != 2 || !strings.Contains(stderr, "nobody") {
		t.Fatalf("worker restart of a missing worker: exit %d %q; want 2", code, stderr)
	}
}

// TestCrashFreesTheHook kills the worker holding a running Hook: the Hook
// loses its assignee, is recovering, and another worker claims it.
func TestCrashFreesTheHook(t *testing.T) {
	e := newWorkerEnv(t)
	e.create(sleeper("first", 100002, false))
	e.create(sleeper("second", 100003, false))
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "fix-login"}}
	h.Spec.Goal = "Fix the login form"
	h.Spec.Steps = []v1.Step{{Name: "reproduce"}, {Name: "fix"}}
	e.create(h)
	if out, stderr, code := e.tether("claim", "fix-login", "--worker", "first"); code != 0 || out != "hook.agents.tether.dev/fix-login\n" {
		t.Fatalf("claim: exit %d %q %q", code, out, stderr)
	}
	claimed := e.hook("fix-login").Generation
	if _, _, err := hookwrite.Transition(context.Background(), e.c, client.ObjectKey{Namespace: "default", Name: "fix-login"},
		hookwrite.Input(hookfsm.Input{Event: hookfsm.Begin, WorkingOn: "reproducing"}), hookwrite.Options{Actor: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.tether("claim", "fix-login", "--worker", "second"); code != 2 || !strings.Contains(stderr, "held by worker first") {
		t.Fatalf("claiming a held hook: exit %d %q; want 2 naming the holder", code, stderr)
	}

	e.startRun()
	first := e.waitRunning("first", 0)
	e.waitRunning("second", 0)
	kill9(t, first.Status.PID)
	e.waitFor(10*time.Second, "the hook to be freed and recovering", func() bool {
		h = e.hook("fix-login")
		return h.Spec.Assignee == "" && h.Status.State == v1.HookRecovering
	})
	if h.Status.Recovery == nil || h.Status.Recovery.CrashType != v1.CrashAssigneeLost || h.Status.Recovery.LastState != v1.HookStepRunning {
		t.Fatalf("recovery = %+v; want assignee_lost from step_running", h.Status.Recovery)
	}
	var w *v1.Worker
	e.waitFor(10*time.Second, "the crash record", func() bool {
		w = e.worker("first")
		return len(w.Status.Crashes) > 0
	})
	if w.Status.Phase != v1.WorkerCrashed || len(w.Status.Crashes) != 1 {
		t.Fatalf("first: phase %s, crashes %+v", w.Status.Phase, w.Status.Crashes)
	}
	if c := w.Status.Crashes[0]; c.Hook != "fix-login" || len(c.Held) != 1 || c.Held[0].Name != "fix-login" || c.Held[0].Generation != claimed || c.Restarted {
		t.Fatalf("crash record %+v; want hook fix-login held at generation %d, not restarted", c, claimed)
	}
	e.waitFor(10*time.Second, "an AssigneeLost Event on the hook", func() bool { return len(e.events("fix-login", "AssigneeLost")) == 1 })
	// The Hook's own controller freed it; its history says who and why.
	if last := h.Status.History[len(h.Status.History)-1]; last.Actor != "tether-hook-controller" || !strings.Contains(last.Message, "worker first died") {
		t.Fatalf("last history entry %+v; want the hook controller's interrupt naming worker first", last)
	}
	// A dead Worker cannot claim: its Hook would be freed at once.
	if _, stderr, code := e.tether("claim", "--next", "--worker", "first"); code != 1 || !strings.Contains(stderr, "first") || !strings.Contains(stderr, "Crashed") {
		t.Fatalf("claim for a crashed worker: exit %d %q; want 1 naming the worker and its phase", code, stderr)
	}

	if out, stderr, code := e.tether("claim", "--next", "--worker", "second"); code != 0 || out != "hook.agents.tether.dev/fix-login\n" {
		t.Fatalf("second claims: exit %d %q %q", code, out, stderr)
	}
	if e.hook("fix-login").Spec.Assignee != "second" {
		t.Fatal("the claim did not set the assignee")
	}
	if _, _, code := e.tether("recover", "--help"); code == 0 {
		out, stderr, code := e.tether("recover", "fix-login")
		if code != 0 || !strings.Contains(strings.ToLower(out), "resume") {
			t.Fatalf("recover: exit %d, stderr %q, output lacks how to resume:\n%s", code, stderr, out)
		}
	}

	// Deleting a Worker stops its process through the finalizer and frees its Hook.
	second := e.worker("second")
	if err := e.c.Delete(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	e.waitFor(20*time.Second, "the deleted worker's process to end and the worker to go", func() bool {
		alive, _ := identityOf(second).Alive()
		err := e.c.Get(context.Background(), client.ObjectKeyFromObject(second), &v1.Worker{})
		return !alive && err != nil
	})
	if h := e.hook("fix-login"); h.Spec.Assignee != "" {
		t.Fatalf("the deleted worker still holds the hook")
	}
}

// TestClaimNextRace runs 16 claimers against 100 hooks: every hook is
// claimed exactly once, and what each claimer printed is what it holds.
func TestClaimNextRace(t *testing.T) {
	e := newWorkerEnv(t)
	const claimers, hooks = 16, 100
	for i := range claimers {
		e.create(&v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i)}})
	}
	for i := range hooks {
		h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("task-%03d", i)}}
		h.Spec.Goal, h.Spec.Steps = "race", []v1.Step{{Name: "only"}}
		e.create(h)
	}
	suspended := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "paused"}}
	suspended.Spec.Goal, suspended.Spec.Steps, suspended.Spec.Suspend = "paused", []v1.Step{{Name: "only"}}, true
	e.create(suspended)

	won := make([][]string, claimers)
	var wg sync.WaitGroup
	errs := make(chan error, claimers)
	for i := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cmd := exec.Command(tetherBin, "--store", e.dir, "claim", "--next", "--worker", fmt.Sprintf("w%d", i))
				out, err := cmd.Output()
				var exitErr *exec.ExitError
				if errors.As(err, &exitErr) && exitErr.ExitCode() == 3 {
					if len(out) != 0 {
						errs <- fmt.Errorf("nothing to claim printed %q", out)
					}
					return
				}
				if err != nil {
					errs <- fmt.Errorf("claimer %d: %w: %s", i, err, out)
					return
				}
				won[i] = append(won[i], strings.TrimPrefix(strings.TrimSpace(string(out)), "hook.agents.tether.dev/"))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]int{}
	for i, names := range won {
		for _, name := range names {
			if prev, dup := seen[name]; dup {
				t.Errorf("hook %s claimed by w%d and w%d", name, prev, i)
			}
			seen[name] = i
			if got := e.hook(name).Spec.Assignee; got != fmt.Sprintf("w%d", i) {
				t.Errorf("w%d printed %s, whose assignee is %q", i, name, got)
			}
		}
	}
	if len(seen) != hooks {
		t.Errorf("%d hooks claimed, want %d", len(seen), hooks)
	}
	if _, ok := seen["paused"]; ok {
		t.Error("a suspended hook was claimed")
	}
	busy := 0
	for _, names := range won {
		if len(names) > 0 {
			busy++
		}
	}
	t.Logf("%d of %d claimers won at least one hook", busy, claimers)
	if _, stderr, code := e.tether("claim", "--next", "--worker", "ghost"); code != 2 || !strings.Contains(stderr, "ghost") {
		t.Errorf("claim for a missing worker: exit %d %q; want 2 naming it", code, stderr)
	}
}

// TestWorkersOutliveTetherRun stops and restarts tether run: healthy
// workers are re-adopted by PID and start time, and a worker that died
// while tether run was down is handled once.
func TestWorkersOutliveTetherRun(t *testing.T) {
	e := newWorkerEnv(t)
	e.create(sleeper("steady", 100004, true))
	victimSpec := sleeper("victim", 100005, true)
	// Three crashes are restarted only with a budget of four: the third
	// crash within the window of a budget of three is not restarted.
	victimSpec.Spec.Restart.MaxCrashes = 4
	e.create(victimSpec)
	e.startRun()
	steady := e.waitRunning("steady", 0)
	victim := e.waitRunning("victim", 0)
	e.stopRun()
	for _, w := range []*v1.Worker{steady, victim} {
		if alive, _ := identityOf(w).Alive(); !alive {
			t.Fatalf("worker %s died with tether run", w.Name)
		}
	}

	e.startRun()
	// A crash of the re-adopted victim proves the new run watches it.
	kill9(t, victim.Status.PID)
	victim2 := e.waitRunning("victim", victim.Status.PID)
	if c := victim2.Status.Crashes; len(c) != 1 || c[0].PID != victim.Status.PID {
		t.Fatalf("victim crashes %+v; want one, of pid %d", c, victim.Status.PID)
	}
	if got := e.worker("steady"); got.Status.PID != steady.Status.PID || got.Status.Restarts != 0 || len(got.Status.Crashes) != 0 {
		t.Fatalf("steady after a restart of tether run: pid %d (was %d), restarts %d, crashes %d", got.Status.PID, steady.Status.PID, got.Status.Restarts, len(got.Status.Crashes))
	}
	if n := processesRunning(t, "sleep", "100004"); n != 1 {
		t.Fatalf("%d steady processes run, want 1", n)
	}

	e.stopRun()
	kill9(t, victim2.Status.PID)
	e.startRun()
	victim3 := e.waitRunning("victim", victim2.Status.PID)
	if c := victim3.Status.Crashes; len(c) != 2 || c[1].PID != victim2.Status.PID || c[1].Reason != supervise.ReasonVanished {
		t.Fatalf("victim crashes %+v; want a second, Vanished, of pid %d", c, victim2.Status.PID)
	}
	e.stopRun()
	e.startRun()
	// One more crash after the second restart of tether run: exactly one
	// new record, so none was recorded twice.
	kill9(t, victim3.Status.PID)
	victim4 := e.waitRunning("victim", victim3.Status.PID)
	if n := len(victim4.Status.Crashes); n != 3 {
		t.Fatalf("%d crash records after three crashes: %+v", n, victim4.Status.Crashes)
	}
	// The new process may not have exec'd sleep yet.
	e.waitFor(5*time.Second, "one victim process", func() bool { return processesRunning(t, "sleep", "100005") == 1 })
	if n := processesRunning(t, "sleep", "100004"); n != 1 {
		t.Fatalf("%d steady processes run, want 1", n)
	}
}

// TestAdoptedProcess adopts a running process through spec.adopt.pid and
// watches it by pidfd; a recorded start time that does not match the PID's
// process means the worker is dead, while the process itself is left alone.
func TestAdoptedProcess(t *testing.T) {
	e := newWorkerEnv(t)
	start := func(arg string) *exec.Cmd {
		cmd := exec.Command("sleep", arg)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		e.pids = append(e.pids, cmd.Process.Pid)
		go func() { _ = cmd.Wait() }()
		return cmd
	}
	adopted := start("100006")
	reused := start("100007")
	a := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "adopted"}}
	a.Spec.Adopt = &v1.AdoptSpec{PID: int32(adopted.Process.Pid)}
	e.create(a)

	id, err := supervise.Identify(reused.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	r := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "reused"}}
	r.Spec.Adopt = &v1.AdoptSpec{PID: int32(id.PID)}
	e.create(r)
	r.Status = v1.WorkerStatus{Phase: v1.WorkerRunning, PID: int32(id.PID), ProcessStartTicks: id.StartTicks + 12345, BootID: id.BootID, Host: host}
	if err := e.c.Status().Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}

	e.startRun()
	w := e.waitRunning("adopted", 0)
	if w.Status.PID != int32(adopted.Process.Pid) {
		t.Fatalf("adopted pid %d, want %d", w.Status.PID, adopted.Process.Pid)
	}
	e.waitFor(10*time.Second, "the worker with a mismatched start time to be judged dead", func() bool {
		return len(e.worker("reused").Status.Crashes) == 1
	})
	if c := e.worker("reused").Status.Crashes[0]; c.Reason != supervise.ReasonPIDReused || c.PID != int32(id.PID) {
		t.Fatalf("crash %+v; want PIDReused of pid %d", c, id.PID)
	}
	if alive, _ := id.Alive(); !alive {
		t.Fatal("the process now holding the PID was touched")
	}

	// An adopted process is only watched: worker restart refuses it, and a
	// Restarting phase written by hand does not stop it either.
	if _, stderr, code := e.tether("worker", "restart", "adopted"); code != 1 || !strings.Contains(stderr, "tether only watches an adopted process") {
		t.Fatalf("worker restart of an adopted worker: exit %d, %q; want 1 and the rule", code, stderr)
	}
	if got := e.worker("adopted"); got.Status.Phase != v1.WorkerRunning || got.Status.WindowStart != nil {
		t.Fatalf("the refused restart changed the worker: phase %s windowStart %v", got.Status.Phase, got.Status.WindowStart)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		forced := e.worker("adopted")
		forced.Status.Phase = v1.WorkerRestarting
		return e.c.Status().Update(context.Background(), forced)
	}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(10*time.Second, "a hand-written Restarting phase of an adopted worker to go back to Running", func() bool {
		return e.worker("adopted").Status.Phase == v1.WorkerRunning
	})
	adoptedID := supervise.Identity{PID: int(w.Status.PID), StartTicks: w.Status.ProcessStartTicks, BootID: w.Status.BootID}
	if alive, _ := adoptedID.Alive(); !alive {
		t.Fatal("a restart request stopped the adopted process")
	}

	kill9(t, w.Status.PID)
	e.waitFor(10*time.Second, "the adopted process's death to be recorded", func() bool {
		got := e.worker("adopted")
		return len(got.Status.Crashes) == 1 && got.Status.Phase == v1.WorkerCrashed
	})
	if c := e.worker("adopted").Status.Crashes[0]; c.Reason != supervise.ReasonVanished || c.Restarted {
		t.Fatalf("adopted crash %+v; want Vanished, not restarted", c)
	}
}

// TestHeartbeatWorkerIsLost covers a Worker with no process for this host
// to watch: it lives by `tether worker heartbeat` and is Lost, freeing its
// Hook, once spec.heartbeatTimeout passes without one.
func TestHeartbeatWorkerIsLost(t *testing.T) {
	e := newWorkerEnv(t)
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "remote"}}
	w.Spec.HeartbeatTimeout = &metav1.Duration{Duration: 2 * time.Second}
	e.create(w)
	h := &v1.Hook{ObjectMeta: metav1.ObjectMeta{Name: "far-task"}}
	h.Spec.Goal, h.Spec.Steps = "far", []v1.Step{{Name: "only"}}
	e.create(h)
	if _, stderr, code := e.tether("claim", "far-task", "--worker", "remote"); code != 0 {
		t.Fatalf("claim: exit %d %q", code, stderr)
	}
	if _, stderr, code := e.tether("worker", "heartbeat", "remote"); code != 0 {
		t.Fatalf("heartbeat: exit %d %q", code, stderr)
	}
	beat := time.Now()
	e.startRun()
	if got := e.worker("remote"); got.Status.Phase != v1.WorkerRunning || got.Status.LastHeartbeat == nil || got.Status.Host == "" {
		t.Fatalf("after a heartbeat: %+v", got.Status)
	}
	e.waitFor(15*time.Second, "the worker to be Lost", func() bool { return e.worker("remote").Status.Phase == v1.WorkerLost })
	if lost := time.Since(beat); lost < 2*time.Second {
		t.Fatalf("lost %s after the heartbeat, before the 2s timeout", lost)
	}
	got := e.worker("remote")
	if c := got.Status.Crashes; len(c) != 1 || c[0].Reason != "HeartbeatExpired" || c[0].Hook != "far-task" || len(c[0].Held) != 1 {
		t.Fatalf("crash records %+v", c)
	}
	e.waitFor(10*time.Second, "the hook of the lost worker to be freed and recovering", func() bool {
		h := e.hook("far-task")
		return h.Spec.Assignee == "" && h.Status.State == v1.HookRecovering
	})
	e.waitFor(10*time.Second, "a WorkerLost Event", func() bool { return len(e.events("remote", "WorkerLost")) == 1 })
	if _, stderr, code := e.tether("worker", "heartbeat", "remote"); code != 0 {
		t.Fatalf("heartbeat: exit %d %q", code, stderr)
	}
	e.waitFor(10*time.Second, "a new heartbeat to bring it back", func() bool { return e.worker("remote").Status.Phase == v1.WorkerRunning })
}

// TestLaunchSurvivesKillingTetherRun kills `tether run` with SIGKILL at
// random points around a Worker's creation, then starts it again, and
// requires exactly one agent process per Worker: a launch that tether run
// could not record is found by its token and adopted, not started twice.
func TestLaunchSurvivesKillingTetherRun(t *testing.T) {
	const tries = 12
	e := newWorkerEnv(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 14))
	for i := range tries {
		name := fmt.Sprintf("agent-%d", i)
		seconds := 200000 + i
		e.startRun()
		e.create(sleeper(name, seconds, false))
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		if err := e.run.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = e.run.Wait()
		e.run = nil
		e.startRun()
		w := e.waitRunning(name, 0)
		// A second launch would be a shell for a moment before its exec.
		time.Sleep(300 * time.Millisecond)
		if n := processesRunning(t, "sleep", strconv.Itoa(seconds)); n != 1 {
			t.Fatalf("try %d: %d agent processes for worker %s, want 1 (status pid %d)", i, n, name, w.Status.PID)
		}
		e.stopRun()
		_ = syscall.Kill(int(w.Status.PID), syscall.SIGKILL)
	}
}

// TestRestartBeforeRecordSurvivesKillingTetherRun kills `tether run` with
// SIGKILL after it restarted a crashed Worker and before it stored the
// crash record (a failpoint holds it there). The next run records the crash
// and the restart of that same process, which it finds by its launch token,
// and starts no second one; the recovered record counts against the crash
// budget like any other, so the crash loop still ends in CrashLoop.
func TestRestartBeforeRecordSurvivesKillingTetherRun(t *testing.T) {
	tests := []struct {
		name string
		// before is how many crashes are handled normally first.
		before int
		// wantPhase is the phase after one more crash once the record is recovered.
		wantPhase v1.WorkerPhase
	}{
		{name: "first crash", before: 0, wantPhase: v1.WorkerRunning},
		{name: "the budget's last restart", before: 1, wantPhase: v1.WorkerCrashLoop},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newWorkerEnv(t)
			seconds := 100020 + i
			w := sleeper("agent", seconds, true)
			w.Spec.Restart.MaxCrashes = 3
			e.create(w)
			e.startRun()
			cur := e.waitRunning("agent", 0)
			for range tt.before {
				kill9(t, cur.Status.PID)
				cur = e.waitRunning("agent", cur.Status.PID)
			}
			e.stopRun()

			marker := filepath.Join(t.TempDir(), "restarted")
			e.runEnv = []string{controllers.FailpointRestartedEnv + "=" + marker}
			e.runBin = failpointBinary(t)
			e.startRun()
			kill9(t, cur.Status.PID)
			var restarted int
			e.waitFor(20*time.Second, "the restart before the record", func() bool {
				data, err := os.ReadFile(marker)
				if err != nil {
					return false
				}
				restarted, err = strconv.Atoi(string(data))
				return err == nil
			})
			e.mu.Lock()
			e.pids = append(e.pids, restarted)
			e.mu.Unlock()
			if err := e.run.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = e.run.Wait()
			e.run = nil
			if got := e.worker("agent"); got.Status.PID != cur.Status.PID || len(got.Status.Crashes) != tt.before {
				t.Fatalf("before the next run: pid %d crashes %d; want the dead pid %d and %d crashes (the record not yet stored)", got.Status.PID, len(got.Status.Crashes), cur.Status.PID, tt.before)
			}
			if err := syscall.Kill(restarted, 0); err != nil {
				t.Fatalf("the restarted process %d died with tether run: %v", restarted, err)
			}

			e.runEnv, e.runBin = nil, ""
			e.startRun()
			got := e.waitRunning("agent", cur.Status.PID)
			n := len(got.Status.Crashes)
			if got.Status.PID != int32(restarted) || n != tt.before+1 || got.Status.Crashes[n-1].PID != cur.Status.PID || !got.Status.Crashes[n-1].Restarted || got.Status.Restarts != int32(tt.before+1) {
				t.Fatalf("after the next run: pid %d (want %d), restarts %d, crashes %+v; want the crash of pid %d recorded as restarted", got.Status.PID, restarted, got.Status.Restarts, got.Status.Crashes, cur.Status.PID)
			}
			if n := processesRunning(t, "sleep", strconv.Itoa(seconds)); n != 1 {
				t.Fatalf("%d agent processes run, want 1", n)
			}

			kill9(t, got.Status.PID)
			e.waitFor(20*time.Second, "the next crash to be recorded", func() bool {
				return len(e.worker("agent").Status.Crashes) == tt.before+2
			})
			if final := e.worker("agent"); final.Status.Phase != tt.wantPhase {
				t.Fatalf("after %d crashes with maxCrashes 3: phase %s, want %s (crashes %+v)", tt.before+2, final.Status.Phase, tt.wantPhase, final.Status.Crashes)
			}
		})
	}
}
