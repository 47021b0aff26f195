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

package controllers_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/pause"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
)

// TestPauseReachesTheRecoveryFile: pausing, changing only the reason (an
// annotation, which does not change the generation) and unpausing each
// rewrite the recovery file the agent reads, and a paused Hook is Ready
// False with reason Suspended.
func TestPauseReachesTheRecoveryFile(t *testing.T) {
	env := newStore(t)
	ctx := context.Background()
	if err := env.c.Create(ctx, newHook("task", time.Hour, "one")); err != nil {
		t.Fatal(err)
	}
	dir := env.startManager(t, testConfig(t))
	waitFor(t, env.c, "task", 10*time.Second, state(v1.HookStepPending))
	key := client.ObjectKey{Namespace: "default", Name: "task"}
	path := recoveryfile.Path(dir, "default", "task")
	waitFile := func(what string, ok func(string) bool) {
		t.Helper()
		var last string
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			data, err := os.ReadFile(path)
			last = string(data)
			return err == nil && ok(last), nil
		})
		if err != nil {
			t.Fatalf("recovery file: %s not reached; last content:\n%s", what, last)
		}
	}
	steps := []struct {
		do     func(context.Context, client.Client, client.ObjectKey, pause.Options) (pause.Result, error)
		reason string
		want   string
	}{
		{pause.Pause, "reviewing", "A person paused this task: reviewing"},
		{pause.Pause, "meeting", "A person paused this task: meeting"},
		{pause.Unpause, "", ""},
	}
	for _, s := range steps {
		if _, err := s.do(ctx, env.c, key, pause.Options{Actor: "tester", Reason: s.reason}); err != nil {
			t.Fatal(err)
		}
		if s.want == "" {
			waitFile("no PAUSED section", func(f string) bool { return !strings.Contains(f, "PAUSED") })
			continue
		}
		waitFile(s.want, func(f string) bool { return strings.Contains(f, s.want) })
		waitFor(t, env.c, "task", 10*time.Second, func(h *v1.Hook) bool {
			for _, c := range h.Status.Conditions {
				if c.Type == v1.ConditionReady {
					return c.Reason == v1.ReasonSuspended
				}
			}
			return false
		})
	}
}
