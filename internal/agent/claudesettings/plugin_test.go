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

package claudesettings_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
)

// pluginDir is the Claude Code plugin in the repository.
var pluginDir = filepath.Join("..", "..", "..", "plugins", "claude")

type pluginHooks struct {
	Description string `json:"description"`
	Hooks       map[string][]struct {
		Matcher *string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// TestPluginMatchesInstaller fails when plugins/claude/hooks/hooks.json
// drifts from what `tether agent install claude` writes: the same events
// (Events), matchers and timeout, and the command `tether agent hook`, with
// tether found on PATH.
func TestPluginMatchesInstaller(t *testing.T) {
	path := filepath.Join(pluginDir, "hooks", "hooks.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var plugin pluginHooks
	if err := json.Unmarshal(data, &plugin); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(plugin.Hooks) != len(claudesettings.Events) {
		t.Errorf("%s has %d events, the installer %d", path, len(plugin.Hooks), len(claudesettings.Events))
	}
	for _, ev := range claudesettings.Events {
		groups, ok := plugin.Hooks[ev.Name]
		if !ok {
			t.Errorf("%s: no %s event", path, ev.Name)
			continue
		}
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Errorf("%s: %s has %d groups, want one group with one hook", path, ev.Name, len(groups))
			continue
		}
		g, h := groups[0], groups[0].Hooks[0]
		switch {
		case ev.Matcher == "" && g.Matcher != nil, ev.Matcher != "" && (g.Matcher == nil || *g.Matcher != ev.Matcher):
			t.Errorf("%s: %s matcher %v, want %q (absent when empty)", path, ev.Name, g.Matcher, ev.Matcher)
		}
		want := claudesettings.HookCommand("tether")
		if h.Type != "command" || h.Command != want || h.Timeout != claudesettings.DefaultTimeout {
			t.Errorf("%s: %s hook %+v, want type command, command %q, timeout %d", path, ev.Name, h, want, claudesettings.DefaultTimeout)
		}
		if !claudesettings.IsTetherCommand(h.Command) {
			t.Errorf("%s: the installer would not recognise %q as tether's", path, h.Command)
		}
	}

	// Whatever the fields above miss: the plugin's "hooks" is exactly what
	// the installer merges into an empty settings file.
	merged, err := claudesettings.Merge("settings.json", []byte("{}\n"), claudesettings.Options{TetherPath: "tether"})
	if err != nil {
		t.Fatal(err)
	}
	var installed, fromPlugin struct {
		Hooks any `json:"hooks"`
	}
	if err := json.Unmarshal(merged, &installed); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &fromPlugin); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(installed.Hooks, fromPlugin.Hooks) {
		t.Errorf("%s differs from the installer's entries; its \"hooks\" should be:\n%s", path, merged)
	}
}

func TestPluginManifest(t *testing.T) {
	path := filepath.Join(pluginDir, ".claude-plugin", "plugin.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if manifest.Name != "tether" || manifest.Description == "" {
		t.Errorf("%s: name %q, description %q; want tether and a description", path, manifest.Name, manifest.Description)
	}
}
