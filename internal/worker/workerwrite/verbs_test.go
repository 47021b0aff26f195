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

package workerwrite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerwrite"
)

func newClient(t *testing.T, w *v1.Worker) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(w).WithStatusSubresource(w).Build()
}

// TestRestart checks tether worker restart's rules: the crash window
// starts again with every crash forgiven and the Worker restarting; an
// adopted Worker, or a process on another host, is refused unchanged.
func TestRestart(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	crash := v1.CrashRecord{Time: metav1.NewTime(now.Add(-time.Minute)), Reason: "exit"}
	cases := []struct {
		name    string
		spec    v1.WorkerSpec
		status  v1.WorkerStatus
		wantErr string
	}{
		{name: "crashed here", spec: v1.WorkerSpec{Command: []string{"agent"}},
			status: v1.WorkerStatus{Phase: v1.WorkerCrashed, Host: "here", Crashes: []v1.CrashRecord{crash}}},
		{name: "a Pod anywhere", spec: v1.WorkerSpec{Template: &corev1.PodTemplateSpec{}},
			status: v1.WorkerStatus{Phase: v1.WorkerRunning, Host: "elsewhere"}},
		{name: "adopted", spec: v1.WorkerSpec{Adopt: &v1.AdoptSpec{PID: 42}},
			status: v1.WorkerStatus{Phase: v1.WorkerRunning, Host: "here"}, wantErr: "worker w adopted pid 42: tether only watches an adopted process"},
		{name: "another host", spec: v1.WorkerSpec{Command: []string{"agent"}},
			status: v1.WorkerStatus{Phase: v1.WorkerRunning, Host: "elsewhere"}, wantErr: "worker w runs on host elsewhere: restart it there"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w"}, Spec: tc.spec, Status: tc.status}
			c := newClient(t, w)
			err := workerwrite.Restart(ctx, c, client.ObjectKeyFromObject(w), "here", now)
			got := &v1.Worker{}
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(w), got); gerr != nil {
				t.Fatal(gerr)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Restart = %v, want %q", err, tc.wantErr)
				}
				if got.ResourceVersion != w.ResourceVersion {
					t.Error("a refused restart wrote the Worker")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != v1.WorkerRestarting || got.Status.WindowStart == nil || !got.Status.WindowStart.Time.Equal(now) {
				t.Errorf("phase %s, window start %v; want Restarting from %s", got.Status.Phase, got.Status.WindowStart, now)
			}
			for _, cr := range got.Status.Crashes {
				if !cr.Forgiven {
					t.Errorf("crash %+v not forgiven", cr)
				}
			}
		})
	}
}

// TestHeartbeat checks tether worker heartbeat: the time and host are
// recorded, and a Worker awaiting its first heartbeat runs.
func TestHeartbeat(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, phase := range []v1.WorkerPhase{"", v1.WorkerPending, v1.WorkerRunning} {
		t.Run(string(phase), func(t *testing.T) {
			ctx := context.Background()
			w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w"}, Status: v1.WorkerStatus{Phase: phase}}
			c := newClient(t, w)
			if err := workerwrite.Heartbeat(ctx, c, client.ObjectKeyFromObject(w), "here", now); err != nil {
				t.Fatal(err)
			}
			got := &v1.Worker{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != v1.WorkerRunning || got.Status.Host != "here" || got.Status.LastHeartbeat == nil || !got.Status.LastHeartbeat.Time.Equal(now) {
				t.Errorf("status %+v; want Running, host here, heartbeat at %s", got.Status, now)
			}
		})
	}
}
