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

package workerwrite

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// Restart asks tether run to restart the Worker key (tether worker
// restart) and resets its crash window at now: the crashes before now are
// forgiven. An adopted Worker, or a process Worker running on a host other
// than host, is refused and nothing is written.
func Restart(ctx context.Context, c client.Client, key client.ObjectKey, host string, now time.Time) error {
	_, err := Update(ctx, c, key, func(w *v1.Worker) error {
		if w.Spec.Adopt != nil {
			return fmt.Errorf("worker %s adopted pid %d: tether only watches an adopted process and never stops or starts it; restart that process yourself, then set spec.adopt.pid to the new one (tether apply or tether edit)", w.Name, w.Spec.Adopt.PID)
		}
		if w.Spec.Template == nil && w.Status.Host != "" && w.Status.Host != host {
			return fmt.Errorf("worker %s runs on host %s: restart it there", w.Name, w.Status.Host)
		}
		start := metav1.NewTime(now)
		w.Status.WindowStart = &start
		for i := range w.Status.Crashes {
			w.Status.Crashes[i].Forgiven = true
		}
		return workerfsm.Apply(&w.Status, workerfsm.RestartRequested)
	})
	return err
}

// Heartbeat records a heartbeat of the Worker key from host at now
// (tether worker heartbeat): status.lastHeartbeat and status.host.
func Heartbeat(ctx context.Context, c client.Client, key client.ObjectKey, host string, now time.Time) error {
	_, err := Update(ctx, c, key, func(w *v1.Worker) error {
		beat := metav1.NewMicroTime(now)
		w.Status.LastHeartbeat, w.Status.Host = &beat, host
		return workerfsm.Apply(&w.Status, workerfsm.Heartbeat)
	})
	return err
}
