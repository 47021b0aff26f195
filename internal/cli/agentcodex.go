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
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
	"github.com/tether-dev/tether/internal/agent/codexhook"
)

// codexDialect is Codex's hooks.json: Claude Code's shape, with the events
// Codex has. Codex clamps a SessionEnd hook's timeout to 3 s (and warns at
// every start when it is longer), so that one asks for 3.
var codexDialect = &claudesettings.Dialect{
	Agent: codexhook.Agent,
	Events: []claudesettings.EventSpec{
		{Name: "SessionStart"},
		{Name: "UserPromptSubmit"},
		{Name: "PostToolUse", Matcher: "*"},
		{Name: "PreCompact"},
		{Name: "Stop"},
		{Name: "SessionEnd", Timeout: 3},
	},
	Product: "Codex",
	Files:   "Codex hooks files",
}

func init() {
	registerAgent(&agentKind{
		Name:         codexhook.Agent,
		Title:        "OpenAI Codex CLI",
		Adapter:      codexhook.Adapter{ReadFile: os.ReadFile},
		Instructions: "AGENTS.md",
		Scopes: []agentScope{
			{Name: "project", File: "DIR/.codex/hooks.json"},
			{Name: "user", File: "$CODEX_HOME/hooks.json, default ~/.codex/hooks.json"},
		},
		Edit: editCodex,
	})
}

// codexHooksPath is the hooks.json of scope.
func codexHooksPath(scope, dir, home string) (string, error) {
	switch scope {
	case "project", "":
		return filepath.Join(dir, ".codex", "hooks.json"), nil
	case "user":
		if h := os.Getenv("CODEX_HOME"); h != "" {
			return filepath.Join(h, "hooks.json"), nil
		}
		if home == "" {
			return "", errors.New("scope user: no home directory")
		}
		return filepath.Join(home, ".codex", "hooks.json"), nil
	}
	return "", fmt.Errorf("scope: unknown value %q for codex: want project or user", scope)
}

// editCodex installs (or uninstalls) tether's entries in Codex's
// hooks.json of the scope; the command is `tether agent hook --agent codex`.
func editCodex(req agentEdit) (agentEditResult, error) {
	path, err := codexHooksPath(req.Scope, req.Dir, req.Home)
	if err != nil {
		return agentEditResult{}, fmt.Errorf("--%w", err)
	}
	var res claudesettings.Result
	if req.Install {
		res, err = claudesettings.Install(path, claudesettings.Options{TetherPath: req.Tether, RecordDir: req.RecordDir, Dialect: codexDialect}, req.DryRun)
	} else {
		res, err = claudesettings.UninstallDialect(path, req.RecordDir, codexDialect, req.DryRun)
	}
	return agentEditResult{Path: res.Path, Changed: res.Changed, After: res.After}, err
}
