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

package claudehook_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudehook"
)

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","hook_event_name":"Stop","stop_hook_active":true}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git commit -m x && gh pr create"},"tool_response":{"stdout":"https://h/o/r/pull/1"}}`,
		`{"hook_event_name":"SessionStart","source":"compact"}`,
		`{"hook_event_name":""}`, `[]`, ``, `{"hook_event_name":"Stop"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := claudehook.DecodeEvent(bytes.NewReader(data))
		if err != nil {
			return
		}
		if ev.HookEventName == "" {
			t.Fatal("decoded an event without hook_event_name")
		}
		// A decoded event survives a round trip.
		again, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		ev2, err := claudehook.DecodeEvent(bytes.NewReader(again))
		if err != nil || ev2.HookEventName != ev.HookEventName || ev2.SessionID != ev.SessionID || ev2.StopHookActive != ev.StopHookActive {
			t.Fatalf("round trip: %v %+v", err, ev2)
		}
		d := claudehook.DetectPostToolUse(ev)
		if d.PRURL != "" && len(d.Triggers) == 0 {
			t.Fatalf("a PR URL without a trigger: %+v", d)
		}
	})
}

func FuzzDetectShell(f *testing.F) {
	for _, s := range []string{
		`git commit -m x`, `git -C d commit && git push`, `FOO=1 gh pr create --fill`,
		"git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"", `bash -c 'git push'`, "cat <<E\ngit push\nE",
		`git commit --dry-run`, "`", `"`, `'`, `$(`, `<<`, `\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := claudehook.DetectShell(s)
		if len(got) > 3 {
			t.Fatalf("more triggers than exist: %v", got)
		}
		seen := map[claudehook.Trigger]bool{}
		for _, tr := range got {
			if seen[tr] {
				t.Fatalf("trigger %s twice", tr)
			}
			seen[tr] = true
		}
		// Detection is deterministic.
		if again := claudehook.DetectShell(s); len(again) != len(got) {
			t.Fatalf("not deterministic: %v then %v", got, again)
		}
	})
}
