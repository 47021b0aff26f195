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

	"github.com/tether-dev/tether/internal/agent/claudehook"
	"github.com/tether-dev/tether/internal/agent/claudesettings"
)

func init() {
	registerAgent(&agentKind{
		Name:         claudehook.Agent,
		Title:        "Claude Code",
		Adapter:      claudehook.Adapter{},
		Instructions: "CLAUDE.md",
		Scopes: []agentScope{
			{Name: string(claudesettings.ScopeProject), File: "DIR/.claude/settings.json"},
			{Name: string(claudesettings.ScopeLocal), File: "DIR/.claude/settings.local.json"},
			{Name: string(claudesettings.ScopeUser), File: "~/.claude/settings.json"},
		},
		Edit: editClaude,
	})
}

// editClaude installs (or uninstalls) tether's entries in Claude Code's
// settings file of the scope; the hooks run `tether agent hook` without
// --agent, as they did before other agents came.
func editClaude(req agentEdit) (agentEditResult, error) {
	path, err := claudesettings.Path(claudesettings.Scope(req.Scope), req.Dir, req.Home)
	if err != nil {
		return agentEditResult{}, fmt.Errorf("--%w", err)
	}
	var res claudesettings.Result
	if req.Install {
		res, err = claudesettings.Install(path, claudesettings.Options{TetherPath: req.Tether, RecordDir: req.RecordDir}, req.DryRun)
	} else {
		res, err = claudesettings.Uninstall(path, req.RecordDir, req.DryRun)
	}
	return agentEditResult{Path: res.Path, Changed: res.Changed, After: res.After}, err
}
