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
	"reflect"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudehook"
)

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    claudehook.Event
		wantErr string
	}{
		{
			name: "session start with unknown fields",
			in:   `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"SessionStart","source":"compact","model":"x","permission_mode":"default"}`,
			want: claudehook.Event{SessionID: "s1", TranscriptPath: "/t.jsonl", CWD: "/w", HookEventName: "SessionStart", Source: "compact"},
		},
		{
			name: "stop",
			in:   `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"done"}`,
			want: claudehook.Event{SessionID: "s1", HookEventName: "Stop", StopHookActive: true},
		},
		{
			name: "post tool use keeps raw tool fields",
			in:   ` {"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a"}}` + "\n",
			want: claudehook.Event{HookEventName: "PostToolUse", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolResponse: json.RawMessage(`{"stdout":"a"}`)},
		},
		{
			name: "prompt, reason, trigger, instructions",
			in:   `{"hook_event_name":"PreCompact","prompt":"p","reason":"clear","trigger":"manual","custom_instructions":"keep it"}`,
			want: claudehook.Event{HookEventName: "PreCompact", Prompt: "p", Reason: "clear", Trigger: "manual", CustomInstructions: "keep it"},
		},
		{name: "empty", in: "", wantErr: "want a JSON object"},
		{name: "array", in: "[]", wantErr: "want a JSON object"},
		{name: "truncated", in: `{"hook_event_name":"Stop"`, wantErr: "event: unexpected end"},
		{name: "no event name", in: `{"session_id":"s"}`, wantErr: "hook_event_name: required"},
		// Lenient: a field of another type, null or missing is left zero
		// (issue 25: PreCompact's custom_instructions is null).
		{name: "wrong type", in: `{"hook_event_name":"Stop","stop_hook_active":"yes","session_id":"s"}`, want: claudehook.Event{HookEventName: "Stop", SessionID: "s"}},
		{name: "null instructions", in: `{"hook_event_name":"PreCompact","trigger":"manual","custom_instructions":null}`, want: claudehook.Event{HookEventName: "PreCompact", Trigger: "manual"}},
		{name: "event name of another type", in: `{"hook_event_name":7}`, wantErr: "hook_event_name: required"},
		{
			name: "post tool use failure",
			in:   `{"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"false"},"error":"Exit code 1","is_interrupt":false}`,
			want: claudehook.Event{HookEventName: "PostToolUseFailure", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"false"}`), Error: "Exit code 1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudehook.DecodeEvent(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeEventTooLarge(t *testing.T) {
	big := `{"hook_event_name":"PostToolUse","tool_response":"` + strings.Repeat("x", claudehook.MaxEventSize) + `"}`
	if _, err := claudehook.DecodeEvent(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("error %v", err)
	}
}

func TestAnswers(t *testing.T) {
	tests := []struct {
		name string
		a    claudehook.Answer
		want string
	}{
		{name: "session start", a: claudehook.SessionStartContext("# Recovery\n<do> & \"go\""), want: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"# Recovery\n<do> & \"go\""}}` + "\n"},
		{name: "prompt context", a: claudehook.AdditionalContext(claudehook.UserPromptSubmit, "x"), want: `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}` + "\n"},
		{name: "empty context", a: claudehook.SessionStartContext(""), want: ""},
		{name: "block", a: claudehook.BlockStop("run tether step done h"), want: `{"decision":"block","reason":"run tether step done h"}` + "\n"},
		{name: "block without reason allows", a: claudehook.BlockStop(""), want: ""},
		{name: "allow", a: claudehook.AllowStop(), want: ""},
		{name: "no-op", a: claudehook.NoOp(), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.a.ExitCode != 0 {
				t.Fatalf("exit code %d: tether always exits 0", tt.a.ExitCode)
			}
			var b bytes.Buffer
			if err := tt.a.Write(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Fatalf("got %q want %q", b.String(), tt.want)
			}
		})
	}
}

func TestDetectShell(t *testing.T) {
	c, p, pr := claudehook.TriggerGitCommit, claudehook.TriggerGitPush, claudehook.TriggerPRCreated
	tests := []struct {
		cmd  string
		want []claudehook.Trigger
	}{
		{`git commit -m "x"`, []claudehook.Trigger{c}},
		{`git -C ../repo commit -am wip`, []claudehook.Trigger{c}},
		{`git -c user.name=a --git-dir .git --no-pager commit -m x`, []claudehook.Trigger{c}},
		{`/usr/bin/git commit`, []claudehook.Trigger{c}},
		{`git add . && git commit -m "a && b" && git push origin HEAD`, []claudehook.Trigger{c, p}},
		{`GIT_AUTHOR_NAME=bot FOO=1 git commit -m x`, []claudehook.Trigger{c}},
		{`env -i HOME=/h git push`, []claudehook.Trigger{p}},
		{`cd sub; git commit -m x || echo failed`, []claudehook.Trigger{c}},
		{`(cd sub && git commit -m x) | tee log`, []claudehook.Trigger{c}},
		{`git commit --dry-run`, nil},
		{`git commit --dry-run -m x && git push`, []claudehook.Trigger{p}},
		{`git push --dry-run`, nil},
		{`git push -n origin main`, nil},
		{`git commit -n -m x`, []claudehook.Trigger{c}},
		{`git commit -m "--dry-run is a flag" -- --dry-run`, []claudehook.Trigger{c}},
		{`echo git commit`, nil},
		{`echo "git commit && git push"`, nil},
		{`git log --grep commit`, nil},
		{`git status # git commit later`, nil},
		{`gh pr create --fill`, []claudehook.Trigger{pr}},
		{`gh pr create --title "x" --body "$(cat <<'EOF'` + "\nDon't (break) it\nEOF\n" + `)"`, []claudehook.Trigger{pr}},
		{`gh -R a/b pr new`, []claudehook.Trigger{pr}},
		{`gh pr create --dry-run`, nil},
		{`gh pr list`, nil},
		{"git commit -m \"$(cat <<'EOF'\nFix: don't push\n\ngit push\nEOF\n)\" && git push", []claudehook.Trigger{c, p}},
		{"cat > msg <<EOF\ngit commit\nEOF\ngit push", []claudehook.Trigger{p}},
		{"cat <<-EOF > f\n\tgit commit\n\tEOF\necho ok", nil},
		{`bash -c "git commit -m x && gh pr create"`, []claudehook.Trigger{c, pr}},
		{`sh -ec 'git push'`, []claudehook.Trigger{p}},
		{`git commit -m x 2>&1 | tail -1 & git push`, []claudehook.Trigger{c, p}},
		{`git commit -m x > /dev/null 2>&1`, []claudehook.Trigger{c}},
		{"git \\\n  commit -m x", []claudehook.Trigger{c}},
		{`nohup git push &`, []claudehook.Trigger{p}},
		{"git commit\ngit commit", []claudehook.Trigger{c}},
		{"git", nil},
		{"", nil},
		{`git commit -m 'unterminated`, []claudehook.Trigger{c}},
		{"echo `git commit`", nil},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if got := claudehook.DetectShell(tt.cmd); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("DetectShell(%q) = %v, want %v", tt.cmd, got, tt.want)
			}
		})
	}
}

func TestDetectPostToolUse(t *testing.T) {
	tests := []struct {
		name string
		ev   string
		want claudehook.Detection
	}{
		{
			name: "pr with url in stdout",
			ev:   `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git push -u origin b && gh pr create --fill"},"tool_response":{"stdout":"Creating pull request\nhttps://git.example.org/o/r/pull/42\n","stderr":""}}`,
			want: claudehook.Detection{Triggers: []claudehook.Trigger{claudehook.TriggerGitPush, claudehook.TriggerPRCreated}, PRURL: "https://git.example.org/o/r/pull/42"},
		},
		{
			name: "pr with string response",
			ev:   `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"gh pr create"},"tool_response":"see https://h.example/o/r/pull/7."}`,
			want: claudehook.Detection{Triggers: []claudehook.Trigger{claudehook.TriggerPRCreated}, PRURL: "https://h.example/o/r/pull/7"},
		},
		{
			name: "pr without output",
			ev:   `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"gh pr create"}}`,
			want: claudehook.Detection{Triggers: []claudehook.Trigger{claudehook.TriggerPRCreated}},
		},
		{
			name: "commit url is not a pr",
			ev:   `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git commit -m x"},"tool_response":{"stdout":"https://h.example/o/r/pull/7"}}`,
			want: claudehook.Detection{Triggers: []claudehook.Trigger{claudehook.TriggerGitCommit}},
		},
		{
			name: "other tool",
			ev:   `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"command":"git commit"}}`,
			want: claudehook.Detection{},
		},
		{
			name: "bad tool input",
			ev:   `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":["git commit"]}`,
			want: claudehook.Detection{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := claudehook.DecodeEvent(strings.NewReader(tt.ev))
			if err != nil {
				t.Fatal(err)
			}
			if got := claudehook.DetectPostToolUse(ev); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v want %+v", got, tt.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	base := claudehook.StopInput{State: "step_running", StopHookActive: true, Consecutive: 2, HookTotal: 10,
		LastFingerprint: "a", Fingerprint: "b", Next: "run `tether step done h`"}
	with := func(f func(*claudehook.StopInput)) claudehook.StopInput {
		in := base
		f(&in)
		return in
	}
	tests := []struct {
		name      string
		in        claudehook.StopInput
		limits    claudehook.Limits
		wantBlock bool
		wantEnd   claudehook.EndReason
		wantMsg   string
		wantCons  int
		wantTotal int
	}{
		{name: "continue", in: base, wantBlock: true, wantCons: 3, wantTotal: 11},
		{name: "new turn resets the consecutive count", in: with(func(in *claudehook.StopInput) { in.StopHookActive = false; in.Consecutive = 99 }), wantBlock: true, wantCons: 1, wantTotal: 11},
		{name: "first continuation ever", in: with(func(in *claudehook.StopInput) { in.LastFingerprint = ""; in.HookTotal = 0; in.Consecutive = 0 }), wantBlock: true, wantCons: 1, wantTotal: 1},
		{name: "terminal", in: with(func(in *claudehook.StopInput) { in.Terminal = true; in.State = "completed" }), wantEnd: claudehook.EndTerminal, wantMsg: "completed, a terminal state", wantTotal: 10},
		{name: "terminal without state", in: with(func(in *claudehook.StopInput) { in.Terminal = true; in.State = "" }), wantEnd: claudehook.EndTerminal, wantMsg: "in a terminal state", wantTotal: 10},
		{name: "paused", in: with(func(in *claudehook.StopInput) { in.Suspended = true }), wantEnd: claudehook.EndSuspended, wantMsg: "paused", wantTotal: 10},
		{name: "awaiting human", in: with(func(in *claudehook.StopInput) { in.AwaitingHuman = true }), wantEnd: claudehook.EndAwaitingHuman, wantMsg: "awaits a person", wantTotal: 10},
		{name: "terminal wins over paused", in: with(func(in *claudehook.StopInput) { in.Terminal = true; in.Suspended = true }), wantEnd: claudehook.EndTerminal, wantTotal: 10},
		{name: "no next action", in: with(func(in *claudehook.StopInput) { in.Next = "" }), wantEnd: claudehook.EndNoNextAction, wantTotal: 10},
		{name: "hook cap default", in: with(func(in *claudehook.StopInput) { in.HookTotal = claudehook.DefaultMaxPerHook }), wantEnd: claudehook.EndHookCap, wantMsg: "cap of 100 continuations", wantTotal: 100},
		{name: "hook cap configured", in: base, limits: claudehook.Limits{MaxPerHook: 10}, wantEnd: claudehook.EndHookCap, wantTotal: 10},
		{name: "session cap default", in: with(func(in *claudehook.StopInput) { in.Consecutive = claudehook.DefaultMaxConsecutive }), wantEnd: claudehook.EndConsecutiveCap, wantMsg: "cap of 6 consecutive", wantTotal: 10},
		{name: "below session cap", in: with(func(in *claudehook.StopInput) { in.Consecutive = claudehook.DefaultMaxConsecutive - 1 }), wantBlock: true, wantCons: 6, wantTotal: 11},
		{name: "session cap configured", in: base, limits: claudehook.Limits{MaxConsecutive: 2}, wantEnd: claudehook.EndConsecutiveCap, wantTotal: 10},
		{name: "no progress", in: with(func(in *claudehook.StopInput) { in.Fingerprint = "a" }), wantEnd: claudehook.EndNoProgress, wantMsg: "no progress", wantTotal: 10},
		{name: "history mismatch on a terminal status: told once", in: with(func(in *claudehook.StopInput) { in.HistoryMismatch, in.Terminal, in.State = true, true, "completed" }),
			wantBlock: true, wantCons: 3, wantTotal: 11},
		{name: "history mismatch, already told", in: with(func(in *claudehook.StopInput) { in.HistoryMismatch, in.Terminal, in.Fingerprint = true, true, "a" }),
			wantEnd: claudehook.EndHistoryMismatch, wantMsg: "tether repair", wantTotal: 10},
		{name: "history mismatch at a cap", in: with(func(in *claudehook.StopInput) {
			in.HistoryMismatch, in.Consecutive = true, claudehook.DefaultMaxConsecutive
		}),
			wantEnd: claudehook.EndHistoryMismatch, wantTotal: 10},
		{name: "history mismatch while paused", in: with(func(in *claudehook.StopInput) { in.HistoryMismatch, in.Suspended = true, true }),
			wantEnd: claudehook.EndSuspended, wantTotal: 10},
		{name: "no progress across turns too", in: with(func(in *claudehook.StopInput) { in.Fingerprint = "a"; in.StopHookActive = false }), wantEnd: claudehook.EndNoProgress, wantTotal: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := claudehook.Decide(tt.in, tt.limits)
			if d.Block != tt.wantBlock || d.End != tt.wantEnd || d.Consecutive != tt.wantCons || d.HookTotal != tt.wantTotal {
				t.Fatalf("got %+v", d)
			}
			if !strings.Contains(d.Message, tt.wantMsg) {
				t.Fatalf("message %q, want %q", d.Message, tt.wantMsg)
			}
			var b bytes.Buffer
			_ = d.Answer().Write(&b)
			if d.Block {
				if d.Reason != tt.in.Next || !strings.Contains(b.String(), `"decision":"block"`) {
					t.Fatalf("block answer %q reason %q", b.String(), d.Reason)
				}
			} else if b.Len() != 0 || d.Message == "" {
				t.Fatalf("allow must print nothing and say why: %q %q", b.String(), d.Message)
			}
		})
	}
}

func TestDisabled(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"1", true}, {"true", true}, {"yes", true}, {"", false}, {"0", false}, {"false", false}, {"no", false},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == claudehook.DisableEnv {
				return tt.value
			}
			return ""
		}
		if got := claudehook.Disabled(getenv); got != tt.want {
			t.Errorf("TETHER_DISABLE=%q: Disabled = %v, want %v", tt.value, got, tt.want)
		}
	}
}
