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

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// DefaultHookTimeout is a command hook's timeout when its entry has none. The
// hooks reference documented 60 s when this simulator was written (later
// releases raised it); tether's entries always set their own.
const DefaultHookTimeout = 60 * time.Second

// hookCommand is one entry of a matcher group.
type hookCommand struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout"`
}

// matcherGroup is one element of an event's array.
type matcherGroup struct {
	Matcher string        `json:"matcher"`
	Hooks   []hookCommand `json:"hooks"`
}

type settingsFile struct {
	Hooks map[string][]matcherGroup `json:"hooks"`
}

// source is one loaded settings file, in the order Claude Code merges them.
type source struct {
	path   string
	groups map[string][]matcherGroup
}

// loadSettings reads the user settings file (when given), then the project's
// .claude/settings.json and .claude/settings.local.json. A missing file is
// skipped; a file that is not valid JSON is an error (Claude Code reports it
// and ignores the file; a test harness should fail loudly instead).
func loadSettings(project, userSettings string) ([]source, error) {
	paths := []string{}
	if userSettings != "" {
		paths = append(paths, userSettings)
	}
	paths = append(paths,
		filepath.Join(project, ".claude", "settings.json"),
		filepath.Join(project, ".claude", "settings.local.json"))
	var out []source
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var s settingsFile
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("settings %s: %w", p, err)
		}
		out = append(out, source{path: p, groups: s.Hooks})
	}
	return out, nil
}

// matchedHook is a command to run for an event.
type matchedHook struct {
	command string
	timeout time.Duration
}

// matcherField names what an event's matcher is tested against; events not
// listed ignore matchers.
var matcherField = map[string]func(map[string]any) string{
	"PreToolUse":   field("tool_name"),
	"PostToolUse":  field("tool_name"),
	"SessionStart": field("source"),
	"PreCompact":   field("trigger"),
	"SessionEnd":   field("reason"),
}

func field(name string) func(map[string]any) string {
	return func(in map[string]any) string {
		s, _ := in[name].(string)
		return s
	}
}

// matches applies Claude Code's matcher rule: an empty or "*" matcher (or an
// event without matchers) matches everything; otherwise the matcher is a
// regular expression that must match the whole value ("Write" matches only
// Write, "Edit|Write" either, "Notebook.*" any Notebook tool). An invalid
// expression matches nothing.
func matches(matcher, value string) (bool, error) {
	if matcher == "" || matcher == "*" {
		return true, nil
	}
	re, err := regexp.Compile(`^(?:` + matcher + `)$`)
	if err != nil {
		return false, fmt.Errorf("matcher %q: %w", matcher, err)
	}
	return re.MatchString(value), nil
}

// hooksFor returns the command hooks of event that match input, in settings
// order, with identical command strings run once.
func hooksFor(sources []source, event string, input map[string]any) ([]matchedHook, []string) {
	var out []matchedHook
	var warnings []string
	seen := map[string]bool{}
	for _, src := range sources {
		for _, g := range src.groups[event] {
			if f, ok := matcherField[event]; ok {
				ok, err := matches(g.Matcher, f(input))
				if err != nil {
					warnings = append(warnings, fmt.Sprintf("%s: %v", src.path, err))
				}
				if !ok {
					continue
				}
			}
			for _, h := range g.Hooks {
				if h.Type != "command" {
					warnings = append(warnings, fmt.Sprintf("%s: %s hook type %q is not simulated", src.path, event, h.Type))
					continue
				}
				if seen[h.Command] {
					continue
				}
				seen[h.Command] = true
				timeout := DefaultHookTimeout
				if h.Timeout > 0 {
					timeout = time.Duration(h.Timeout * float64(time.Second))
				}
				out = append(out, matchedHook{command: h.Command, timeout: timeout})
			}
		}
	}
	return out, warnings
}
