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

package retention_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/retention"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { m := metav1.NewTime(t0.Add(d)); return &m }
	cfg := config.Default("/home")
	cfg.Retention.Failed = metav1.Duration{Duration: time.Hour}
	cases := []struct {
		name     string
		hook     v1.Hook
		terminal bool
		dueAt    time.Time
	}{
		{"running is never due", v1.Hook{Status: v1.HookStatus{State: v1.HookStepRunning, TerminalAt: at(0)}}, false, time.Time{}},
		{"completed default 30d", v1.Hook{Status: v1.HookStatus{State: v1.HookCompleted, TerminalAt: at(0)}}, true, t0.Add(30 * 24 * time.Hour)},
		{"abandoned default 7d", v1.Hook{Status: v1.HookStatus{State: v1.HookAbandoned, TerminalAt: at(0)}}, true, t0.Add(7 * 24 * time.Hour)},
		{"failed from the config", v1.Hook{Status: v1.HookStatus{State: v1.HookFailed, TerminalAt: at(0)}}, true, t0.Add(time.Hour)},
		{
			"spec overrides the config",
			v1.Hook{
				Spec:   v1.HookSpec{Retention: &v1.RetentionPolicy{Failed: &metav1.Duration{Duration: 2 * time.Second}}},
				Status: v1.HookStatus{State: v1.HookFailed, TerminalAt: at(0)},
			},
			true, t0.Add(2 * time.Second),
		},
		{
			"no terminalAt: newest history entry",
			v1.Hook{Status: v1.HookStatus{State: v1.HookAbandoned, History: []v1.HistoryEntry{{Time: *at(0)}, {Time: *at(time.Minute)}}}},
			true, t0.Add(time.Minute + 7*24*time.Hour),
		},
		{
			"no terminalAt, no history: creation",
			v1.Hook{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: *at(time.Hour)}, Status: v1.HookStatus{State: v1.HookCompleted}},
			true, t0.Add(time.Hour + 30*24*time.Hour),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, terminal := retention.Decide(&c.hook, cfg)
			if terminal != c.terminal || !d.DueAt.Equal(c.dueAt) {
				t.Fatalf("Decide = %+v, %v; want due at %s, %v", d, terminal, c.dueAt, c.terminal)
			}
			if terminal && (d.Due(c.dueAt.Add(-time.Nanosecond)) || !d.Due(c.dueAt)) {
				t.Errorf("Due is not exact at %s", c.dueAt)
			}
		})
	}
}
