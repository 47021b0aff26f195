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
	"os"

	"github.com/tether-dev/tether/internal/agent/geminihook"
	"github.com/tether-dev/tether/internal/agent/geminisettings"
)

func init() {
	registerAgent(&agentKind{
		Name:         geminihook.Agent,
		Title:        "Gemini CLI",
		Adapter:      geminihook.Adapter{},
		Instructions: "GEMINI.md",
		Scopes: []agentScope{
			{Name: string(geminisettings.ScopeProject), File: "DIR/.gemini/settings.json"},
			{Name: string(geminisettings.ScopeUser), File: "$GEMINI_CLI_HOME/.gemini/settings.json, default ~/.gemini/settings.json"},
		},
		Edit: editGemini,
	})
}

// editGemini installs (or uninstalls) tether's entries in Gemini CLI's
// settings file of the scope; the hooks run `tether agent hook --agent
// gemini`. The user scope is under $GEMINI_CLI_HOME when set, as Gemini
// CLI reads it.
func editGemini(req agentEdit) (agentEditResult, error) {
	home := req.Home
	if h := os.Getenv("GEMINI_CLI_HOME"); h != "" {
		home = h
	}
	path, err := geminisettings.Path(geminisettings.Scope(req.Scope), req.Dir, home)
	if err != nil {
		return agentEditResult{}, fmt.Errorf("--%w", err)
	}
	if !req.Install {
		res, err := geminisettings.Uninstall(path, req.RecordDir, req.DryRun)
		return agentEditResult{Path: res.Path, Changed: res.Changed, After: res.After}, err
	}
	res, err := geminisettings.Install(path, geminisettings.Options{TetherPath: req.Tether, RecordDir: req.RecordDir}, req.DryRun)
	return agentEditResult{Path: res.Path, Changed: res.Changed, After: res.After}, err
}
