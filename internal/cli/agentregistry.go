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

package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tether-dev/tether/internal/agent/agentevent"
)

// agentKind is one coding agent tether integrates with: its hook protocol
// (`tether agent hook --agent NAME`) and its installer (`tether agent
// install|uninstall NAME`, `tether init --agent NAME`). Adding an agent is
// an adapter package and one registerAgent call in a file of its own.
type agentKind struct {
	// Name is the agent's name in tether: the argument of install and
	// --agent, and status.agentSession.agent.
	Name string
	// Title is the agent's product name, for help texts.
	Title string
	// Adapter translates the agent's hook events and tether's answers.
	Adapter agentevent.Adapter
	// Instructions is the agent's instructions file at the project root
	// (CLAUDE.md), which `tether agent prompt --write` edits.
	Instructions string
	// Scopes are the values --scope takes, each with the file it edits.
	Scopes []agentScope
	// Edit installs or uninstalls tether's hook entries.
	Edit func(agentEdit) (agentEditResult, error)
}

// agentScope is one value of --scope and the hooks file it edits.
type agentScope struct {
	// Name is the value: project, user, local.
	Name string
	// File describes the file, as DIR/.claude/settings.json.
	File string
}

// agentEdit is one install or uninstall.
type agentEdit struct {
	// Install is true for install, false for uninstall.
	Install bool
	// Scope is --scope's value.
	Scope string
	// Dir is the project root, absolute.
	Dir string
	// Home is the user's home directory; empty when unknown.
	Home string
	// Tether is the tether binary the hooks run (install only).
	Tether string
	// RecordDir is where install records what it changed, for uninstall
	// to give the file back; empty records nothing.
	RecordDir string
	// DryRun computes the result without writing it.
	DryRun bool
}

// agentEditResult is what an install or uninstall did.
type agentEditResult struct {
	// Path is the hooks file.
	Path string
	// Changed is false when the file already was as wanted.
	Changed bool
	// After is the file's content after (what --dry-run prints).
	After []byte
}

// agentKinds are the registered agents by name.
var agentKinds = map[string]*agentKind{}

// defaultAgent is the agent of `tether agent hook` without --agent, which
// is what the hooks installed before --agent existed run.
const defaultAgent = "claude"

// registerAgent adds an agent; a second agent of the same name is a
// programming error.
func registerAgent(k *agentKind) {
	if _, dup := agentKinds[k.Name]; dup || k.Adapter == nil || k.Instructions == "" || k.Edit == nil || len(k.Scopes) == 0 {
		panic(fmt.Sprintf("agent %q: registered twice or incomplete", k.Name))
	}
	agentKinds[k.Name] = k
}

// agentNames are the registered agents' names, sorted.
func agentNames() []string {
	names := make([]string, 0, len(agentKinds))
	for n := range agentKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// agentTitles names each agent with its product name.
func agentTitles() string {
	var s []string
	for _, n := range agentNames() {
		s = append(s, n+" ("+agentKinds[n].Title+")")
	}
	return strings.Join(s, ", ")
}

// scopeHelp describes --scope for every agent.
func scopeHelp() string {
	var s []string
	for _, n := range agentNames() {
		var fs []string
		for _, sc := range agentKinds[n].Scopes {
			fs = append(fs, sc.Name+" ("+sc.File+")")
		}
		s = append(s, n+": "+strings.Join(fs, ", "))
	}
	return strings.Join(s, "; ")
}
