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

package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/config"
)

func TestNotify(t *testing.T) {
	cases := []struct {
		name  string
		yaml  string
		check func(*testing.T, []config.Notifier)
		err   []string // all of these in the error
	}{
		{
			name: "none", yaml: "staleAfter: 1m\n",
			check: func(t *testing.T, ns []config.Notifier) {
				if len(ns) != 0 {
					t.Errorf("notifiers %+v", ns)
				}
			},
		},
		{
			name: "defaults",
			yaml: "notify:\n- command: [/usr/bin/notify-send, tether]\n",
			check: func(t *testing.T, ns []config.Notifier) {
				n := ns[0]
				if n.Name != "notify-send" || n.Timeout.Duration != config.DefaultNotifyTimeout || n.Interval() != config.DefaultNotifyMinInterval {
					t.Errorf("notifier %+v", n)
				}
				for _, r := range config.NotifyReasons {
					if !n.Wants(r) {
						t.Errorf("a notifier without reasons does not want %s", r)
					}
				}
			},
		},
		{
			name: "set fields",
			yaml: "notify:\n- name: hook\n  command: [curl, -d, '@-', http://localhost/x]\n  reasons: [WorkerCrashed, Completed]\n  timeout: 3s\n  minInterval: 0s\n",
			check: func(t *testing.T, ns []config.Notifier) {
				n := ns[0]
				if n.Name != "hook" || n.Timeout.Duration != 3*time.Second || n.Interval() != 0 || len(n.Command) != 4 {
					t.Errorf("notifier %+v", n)
				}
				if !n.Wants(config.NotifyCompleted) || n.Wants(config.NotifyHookStale) {
					t.Errorf("reasons %v", n.Reasons)
				}
			},
		},
		{
			name: "unknown reason names the field and the line",
			yaml: "staleAfter: 1m\nnotify:\n- command: [x]\n  reasons:\n  - WorkerCrashed\n  - Crashed\n",
			err:  []string{"line 6", "notify[0].reasons[1]", `"Crashed"`, "HookStale"},
		},
		{name: "no command", yaml: "notify:\n- reasons: [Completed]\n", err: []string{"line 2", "notify[0].command"}},
		{name: "empty argv[0]", yaml: "notify:\n- command: ['']\n", err: []string{"notify[0].command"}},
		{name: "negative timeout", yaml: "notify:\n- command: [x]\n  timeout: -1s\n", err: []string{"line 3", "notify[0].timeout"}},
		{name: "negative interval", yaml: "notify:\n- command: [x]\n  minInterval: -1s\n", err: []string{"line 3", "notify[0].minInterval"}},
		{name: "duplicate names", yaml: "notify:\n- command: [a/x]\n- command: [b/x, --urgent]\n", err: []string{"line 3", "notify[1].command", "notify[0]"}},
		{name: "a YAML 1.1 boolean in argv", yaml: "notify:\n- command: [x, yes]\n", err: []string{"line 2", "notify[0].command[1]", "expected string"}},
		{name: "bad name", yaml: "notify:\n- name: Big_Name\n  command: [x]\n", err: []string{"line 2", "notify[0].name"}},
		{name: "unknown field", yaml: "notify:\n- command: [x]\n  shell: true\n", err: []string{"shell"}},
		{name: "a shell string, not argv", yaml: "notify:\n- command: notify-send tether\n", err: []string{"command"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default("/home")
			err := config.Parse([]byte(c.yaml), "/home", cfg)
			if c.err != nil {
				if err == nil {
					t.Fatalf("no error; want one naming %v", c.err)
				}
				for _, want := range c.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				if len(cfg.Notify) != 0 {
					t.Errorf("a bad file changed the configuration: %+v", cfg.Notify)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg.Notify)
		})
	}
}

func TestFieldErrorsNameTheLine(t *testing.T) {
	cfg := config.Default("/home")
	err := config.Parse([]byte("staleAfter: 1m\nagentLoop:\n  maxPerHook: -3\n"), "/home", cfg)
	if err == nil || !strings.Contains(err.Error(), "line 3: agentLoop.maxPerHook") {
		t.Errorf("error %v; want one naming line 3 and agentLoop.maxPerHook", err)
	}
}
