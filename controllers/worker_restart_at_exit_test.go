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
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/scheme"
)

// The successor of a crashed process is started when its exit is
// delivered, before any reconcile, only if the restart plan restarts that
// crash and no stop was asked for; otherwise the reconcile decides.
func TestRestartAtExit(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		// crashes are the crash records already in the plan's status.
		crashes   int
		auto      bool
		requested bool
		noPlan    bool
		want      bool
	}{
		{name: "within the budget", auto: true, want: true},
		{name: "the budget's last crash", auto: true, crashes: 2},
		{name: "no automatic restart", auto: false},
		{name: "a stop was asked for", auto: true, requested: true},
		{name: "no plan", auto: true, noPlan: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(sch).WithIndex(&v1.Hook{}, HookAssigneeField, indexHookAssignee).Build()
			r, err := newWorkerReconciler(c, c, events.NewFakeRecorder(16), WorkerOptions{LogDir: t.TempDir(), StopGrace: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.procs.close)
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default", UID: "uid"}}
			w.Spec.Command = []string{"sleep", "1001"}
			w.Spec.Restart = v1.RestartPolicy{Auto: tt.auto, MaxCrashes: 3, Window: &metav1.Duration{Duration: time.Hour}}
			// A Worker whose status records a process is Running: the plan
			// is decided, like the reconcile's, along the phase table.
			w.Status.Phase = v1.WorkerRunning
			for range tt.crashes {
				w.Status.Crashes = append(w.Status.Crashes, v1.CrashRecord{Time: metav1.NewTime(now), Reason: "Signaled"})
			}
			key := types.NamespacedName{Namespace: "default", Name: "agent"}
			id, exits := launchSleep(t)
			r.procs.child(key, id, exits)
			if !tt.noPlan {
				r.procs.arm(key, id, restartPlan(w))
			}
			if tt.requested {
				r.procs.markRequested(key, id)
			}
			if err := syscall.Kill(id.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-r.procs.events
			p, _ := r.procs.get(key)
			if p.exit == nil {
				t.Fatal("the exit was not recorded")
			}
			if got := p.next != nil; got != tt.want {
				t.Fatalf("restarted at exit: %v, want %v", got, tt.want)
			}
			if p.next != nil {
				t.Cleanup(func() { r.abandon(p.next) })
				if alive, err := p.next.id.Alive(); err != nil || !alive {
					t.Fatalf("the successor %s does not run (%v)", p.next.id, err)
				}
			}
		})
	}
}
