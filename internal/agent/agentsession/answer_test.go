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

package agentsession_test

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/events"

	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/agentsession"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// TestAnswerWiresEachEvent checks what Answer asks of the backend for each
// event: an Event recorder for an end of turn, the receipt keys for a
// session start and after a compaction, neither for the others.
func TestAnswerWiresEachEvent(t *testing.T) {
	cases := []struct {
		kind                   agentevent.Kind
		wantRecorder, wantKeys int
	}{
		{kind: agentevent.TurnEnd, wantRecorder: 1},
		{kind: agentevent.SessionStart, wantKeys: 1},
		{kind: agentevent.PostCompact, wantKeys: 1},
		{kind: agentevent.Prompt},
		{kind: agentevent.ToolDone},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			e := newEnv(t)
			e.createHook("task", e.ws, hookfsm.Initialize, hookfsm.Begin)
			recorders, keys := 0, 0
			b := agentsession.Backend{
				Client: e.c, Namespace: "default",
				Recorder: func() (events.EventRecorder, error) { recorders++; return e.rec, nil },
				Keys: func() (receipts.KeyManager, error) {
					keys++
					return &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "keys")}, nil
				},
			}
			cfg := config.Default("")
			ev := agentevent.Event{Kind: tc.kind, CWD: e.ws, SessionID: "c1", Source: agentevent.SourceStartup}
			if _, err := agentsession.Answer(context.Background(), ev, agentevent.Capabilities{}, b, cfg, func(string) string { return "" }); err != nil {
				t.Fatal(err)
			}
			if recorders != tc.wantRecorder || keys != tc.wantKeys {
				t.Errorf("asked for %d recorders and %d key managers, want %d and %d", recorders, keys, tc.wantRecorder, tc.wantKeys)
			}
		})
	}
}
