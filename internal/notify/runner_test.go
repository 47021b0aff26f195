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

package notify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/notify"
)

func notifierOf(timeout time.Duration, argv ...string) config.Notifier {
	return config.Notifier{Name: "n", Command: argv, Timeout: metav1.Duration{Duration: timeout}}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	p := notify.Payload{Reason: config.NotifyCompleted, Kind: "Hook", Namespace: "default", Name: "fix-login", Message: "done"}
	cases := []struct {
		name    string
		argv    []string
		timeout time.Duration
		err     string // empty: success
		check   func(t *testing.T, res notify.Result)
	}{
		{
			name: "reads the payload on stdin, with the environment",
			argv: []string{"sh", "-c", `cat > "$0/stdin"; echo "$TETHER_NOTIFY_REASON $TETHER_NOTIFY_KIND $TETHER_NOTIFY_NAMESPACE/$TETHER_NOTIFY_NAME: $TETHER_NOTIFY_MESSAGE"`, dir},
			check: func(t *testing.T, res notify.Result) {
				if res.Output != "Completed Hook default/fix-login: done" {
					t.Errorf("environment: output %q", res.Output)
				}
				var got notify.Payload
				data, err := os.ReadFile(filepath.Join(dir, "stdin"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &got); err != nil || got.Name != "fix-login" || got.Reason != config.NotifyCompleted {
					t.Errorf("stdin %q: %v", data, err)
				}
			},
		},
		{name: "a failing command", argv: []string{"sh", "-c", "echo nope >&2; exit 3"}, err: "exit status 3",
			check: func(t *testing.T, res notify.Result) {
				if res.Output != "nope" {
					t.Errorf("output %q", res.Output)
				}
			}},
		{name: "a missing command", argv: []string{filepath.Join(dir, "missing")}, err: "no such file"},
		{
			name: "a slow command and its children are killed at the timeout",
			argv: []string{"sh", "-c", `sleep 30 & echo $! > "$0/child"; wait`, dir}, timeout: 300 * time.Millisecond,
			err: "timeout of 300ms",
			check: func(t *testing.T, res notify.Result) {
				if res.Duration > 5*time.Second {
					t.Errorf("ran %s", res.Duration)
				}
				data, err := os.ReadFile(filepath.Join(dir, "child"))
				if err != nil {
					t.Fatal(err)
				}
				pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
				deadline := time.Now().Add(5 * time.Second)
				for syscall.Kill(pid, 0) == nil {
					if time.Now().After(deadline) {
						t.Fatalf("the notifier's child %d outlived it", pid)
					}
					time.Sleep(10 * time.Millisecond)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			timeout := c.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			res := notify.Run(context.Background(), notifierOf(timeout, c.argv...), p)
			switch {
			case c.err == "" && res.Err != nil:
				t.Fatalf("error %v; output %q", res.Err, res.Output)
			case c.err != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), c.err)):
				t.Fatalf("error %v, want one with %q", res.Err, c.err)
			}
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}

func TestRunnerNeverBlocksSubmit(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	r := notify.NewRunner(1, 2, logr.Discard(), func(j notify.Job, res notify.Result) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, j.Payload.Name)
	})
	job := func(name string) notify.Job {
		return notify.Job{Notifier: notifierOf(10*time.Second, "true"), Payload: notify.Payload{Name: name}}
	}
	// Not started: the queue of two fills, the third is refused at once.
	start := time.Now()
	if !r.Submit(job("a")) || !r.Submit(job("b")) {
		t.Fatal("a queue with room refused a job")
	}
	if r.Submit(job("c")) {
		t.Fatal("a full queue accepted a job")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Submit took %s", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Stopped at once, it still runs what was queued.
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ran, ",") != "a,b" {
		t.Errorf("ran %v, want a,b", ran)
	}
}
