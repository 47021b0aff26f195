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

// Package codexhook is the OpenAI Codex CLI's adapter of `tether agent hook
// --agent codex`. Codex's command hooks (its "hooks" feature, stable and on
// by default in the pinned 0.171.0) take Claude Code's protocol with Codex's own
// fields: the event JSON on stdin has session_id, transcript_path, cwd,
// hook_event_name, model and the event's fields (SessionStart's source
// startup, resume, clear or compact; PostToolUse's tool_name "Bash",
// tool_input {"command": ...} and tool_response, the command's output as a
// string; Stop's stop_hook_active; PreCompact's trigger; SessionEnd's
// reason), and the answers are Claude Code's JSON (hookSpecificOutput's
// additionalContext, {"decision":"block","reason":...} at Stop), exit 0.
// So this package decodes and encodes with claudehook and only says what
// differs: the agent's name and version, and the events it has.
//
// Codex reports a failed command as a PostToolUse like any other (it has
// no PostToolUseFailure), and after a compaction it sends PostCompact, whose
// answer cannot carry context, then SessionStart with source compact, which
// carries the anchor: tether answers the SessionStart and ignores
// PostCompact.
package codexhook

import (
	"bytes"
	"encoding/json"
	"path/filepath"

	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/claudehook"
)

// Agent is Codex's name in tether: `tether agent hook --agent codex` and
// status.agentSession.agent.
const Agent = "codex"

// packageRootEnv is set by Codex's npm launcher in the environment of
// everything it runs: the package's directory, whose package.json holds
// the version.
const packageRootEnv = "CODEX_MANAGED_PACKAGE_ROOT"

// maxPackageJSON bounds the package.json read for the version.
const maxPackageJSON = 64 << 10

// Adapter is Codex's agentevent.Adapter.
type Adapter struct {
	// ReadFile reads the launcher's package.json for the version; nil
	// leaves the version unknown.
	ReadFile func(path string) ([]byte, error)
}

var _ agentevent.Adapter = Adapter{}

// Decode reads one Codex event.
func (a Adapter) Decode(data []byte, getenv func(string) string) (agentevent.Event, error) {
	ev, err := claudehook.DecodeEvent(bytes.NewReader(data))
	if err != nil {
		return agentevent.Event{}, err
	}
	n := Neutral(ev)
	if getenv != nil && a.ReadFile != nil {
		n.AgentVersion = a.version(getenv(packageRootEnv))
	}
	return n, nil
}

// Render renders ans as Codex reads it: Claude Code's JSON.
func (Adapter) Render(ev agentevent.Event, ans agentevent.Answer) agentevent.Output {
	out := claudehook.RenderAnswer(ev.Native, ans)
	return agentevent.Output{Stdout: out.Stdout, ExitCode: out.ExitCode}
}

// Neutral translates a decoded Codex event. PostCompact is not acted on
// (see the package comment); every other event is Claude Code's.
func Neutral(ev claudehook.Event) agentevent.Event {
	n := claudehook.Neutral(ev)
	n.Agent = Agent
	return n
}

func (a Adapter) version(root string) string {
	if root == "" || !filepath.IsAbs(root) {
		return ""
	}
	data, err := a.ReadFile(filepath.Join(root, "package.json"))
	if err != nil || len(data) > maxPackageJSON {
		return ""
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &pkg) != nil || pkg.Name != "@openai/codex" || len(pkg.Version) > 64 {
		return ""
	}
	return pkg.Version
}
