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

// Package geminisettings merges tether's hook entries into a Gemini CLI
// settings file (.gemini/settings.json) and removes them again.
//
// Gemini CLI reads hooks from the "hooks" key of its settings files, which
// may hold comments ("//" and "/* */"; it strips them before parsing):
//
//	{"hooks": {"<EventName>": [{"matcher": "<regex or exact>", "hooks": [
//	    {"name": "...", "type": "command", "command": "...", "timeout": MS}]}]}}
//
// tether installs one group per event in [Events], each holding one command
// hook named "tether" that runs "<tether path> agent hook --agent gemini"
// with a timeout in milliseconds. An entry is tether's when its type is
// "command" and its command is exactly that, with any path whose base name
// is tether (see [IsTetherCommand]). The file is edited by splicing
// (package jsonc): every byte tether does not add or remove, comments,
// whitespace, key order and spelling included, stays as it was; added
// entries follow the layout and indentation around them. The rest follows
// claudesettings: idempotent, atomic, stale entries under other events
// removed, a file tether cannot parse refused with its line and column, and
// uninstall giving the file back byte for byte from the install's record.
package geminisettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tether-dev/tether/internal/agent/claudesettings"
	"github.com/tether-dev/tether/internal/agent/jsonc"
)

// Scope selects which settings file of Gemini CLI is edited.
type Scope string

const (
	// ScopeProject is DIR/.gemini/settings.json.
	ScopeProject Scope = "project"
	// ScopeUser is ~/.gemini/settings.json.
	ScopeUser Scope = "user"
)

// DefaultTimeout is the timeout written into tether's entries, in
// milliseconds (Gemini CLI's unit). tether answers within 2 s; the margin
// covers a cold start.
const DefaultTimeout = 10000

// EntryName is the name of tether's entries, which Gemini CLI shows and
// `/hooks disable` takes.
const EntryName = "tether"

// AgentArgs follows "agent hook" in tether's command: the protocol to answer.
const AgentArgs = "--agent gemini"

// EventSpec is one Gemini CLI event tether installs a hook for.
type EventSpec struct {
	// Name is the event name, the key under "hooks".
	Name string
	// Matcher is the group's matcher; empty means no "matcher" key (every
	// occurrence).
	Matcher string
}

// Events are the events tether installs, in the order they are written.
var Events = []EventSpec{
	{Name: "SessionStart"},
	{Name: "BeforeAgent"},
	{Name: "AfterTool", Matcher: "*"},
	{Name: "PreCompress"},
	{Name: "AfterAgent"},
	{Name: "SessionEnd"},
}

// Path returns the settings file of scope: dir is the project root, home the
// user's home directory.
func Path(scope Scope, dir, home string) (string, error) {
	switch scope {
	case ScopeProject, "":
		return filepath.Join(dir, ".gemini", "settings.json"), nil
	case ScopeUser:
		if home == "" {
			return "", errors.New("scope user: no home directory")
		}
		return filepath.Join(home, ".gemini", "settings.json"), nil
	default:
		return "", fmt.Errorf("scope: unknown value %q for gemini: want project or user", scope)
	}
}

// Options configure an install.
type Options struct {
	// TetherPath is the tether executable the hooks run. Required.
	TetherPath string
	// Timeout is the hook timeout in milliseconds; 0 means DefaultTimeout.
	Timeout int
	// RecordDir is where Install records what it changed, for Uninstall to
	// give the file back byte for byte; empty records nothing.
	RecordDir string
}

// HookCommand returns the command tether's entries run.
func HookCommand(tetherPath string) string {
	return claudesettings.HookCommand(tetherPath) + " " + AgentArgs
}

// IsTetherCommand reports whether command is one of tether's Gemini hook
// commands: claudesettings.IsTetherCommand followed by exactly
// " --agent gemini".
func IsTetherCommand(command string) bool {
	rest, ok := strings.CutSuffix(command, " "+AgentArgs)
	return ok && claudesettings.IsTetherCommand(rest)
}

// doc is a settings file being edited: its bytes, the same with comments
// blanked, and its tree.
type doc struct {
	name  string
	data  []byte
	plain []byte
	root  *jsonc.Value
}

// parse reads data (a whitespace-only file is "{}") and checks that its top
// level is an object.
func parse(name string, data []byte) (*doc, error) {
	root, err := jsonc.Parse(data)
	if err != nil {
		var se *jsonc.SyntaxError
		if errors.As(err, &se) {
			line, col := jsonc.Position(data, se.Offset)
			return nil, &claudesettings.ParseError{File: name, Line: line, Column: col,
				Msg: "refusing to rewrite a file that is not valid JSON (comments allowed): " + se.Msg}
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if root.Kind != jsonc.Object {
		line, col := jsonc.Position(data, root.Start)
		return nil, &claudesettings.ParseError{File: name, Line: line, Column: col, Msg: "refusing to rewrite a settings file whose top level is not a JSON object"}
	}
	plain, _ := jsonc.Strip(data)
	return &doc{name: name, data: data, plain: plain, root: root}, nil
}

// set makes data, the result of an edit, d's content.
func (d *doc) set(data []byte) error {
	nd, err := parse(d.name, data)
	if err != nil {
		return fmt.Errorf("%s: an edit gave an invalid file (a bug): %w", d.name, err)
	}
	*d = *nd
	return nil
}

func (d *doc) text(v *jsonc.Value) []byte { return d.plain[v.Start:v.End] }

// hooks returns the "hooks" object, nil when absent.
func (d *doc) hooks() (*jsonc.Value, error) {
	h := d.root.Get("hooks")
	if h != nil && h.Kind != jsonc.Object {
		return nil, fmt.Errorf("%s: hooks: want an object", d.name)
	}
	return h, nil
}

// isTetherEntry reports whether v is one of tether's hook entries.
func (d *doc) isTetherEntry(v *jsonc.Value) bool {
	if v.Kind != jsonc.Object {
		return false
	}
	var typ, command string
	t, c := v.Get("type"), v.Get("command")
	if t == nil || c == nil || json.Unmarshal(d.text(t), &typ) != nil || json.Unmarshal(d.text(c), &command) != nil {
		return false
	}
	return typ == "command" && IsTetherCommand(command)
}

// entries returns a group's hook entries, nil when g is not a group.
func entries(g *jsonc.Value) []*jsonc.Value {
	if g.Kind != jsonc.Object {
		return nil
	}
	if h := g.Get("hooks"); h != nil && h.Kind == jsonc.Array {
		return h.Elems
	}
	return nil
}

// removeOne removes the first of tether's entries in the event array of
// event (its group when it holds nothing else). It reports whether it
// removed one and whether that emptied the array.
func (d *doc) removeOne(event string) (removed, emptied bool, err error) {
	h, err := d.hooks()
	if err != nil || h == nil {
		return false, false, err
	}
	arr := h.Get(event)
	if arr == nil || arr.Kind != jsonc.Array {
		return false, false, nil
	}
	for gi, g := range arr.Elems {
		es := entries(g)
		ours := 0
		for _, e := range es {
			if d.isTetherEntry(e) {
				ours++
			}
		}
		if ours == 0 {
			continue
		}
		if ours == len(es) {
			return true, len(arr.Elems) == 1, d.set(jsonc.Remove(d.data, arr, gi))
		}
		for ei, e := range es {
			if d.isTetherEntry(e) {
				return true, false, d.set(jsonc.Remove(d.data, g.Get("hooks"), ei))
			}
		}
	}
	return false, false, nil
}

// removeAll removes tether's entries under event, and the event's member
// when that removal emptied its array and dropEmpty. It reports whether
// anything was removed.
func (d *doc) removeAll(event string, dropEmpty bool) (bool, error) {
	any := false
	for {
		removed, emptied, err := d.removeOne(event)
		if err != nil || !removed {
			return any, err
		}
		any = true
		if emptied && dropEmpty {
			h, _ := d.hooks()
			for i, m := range h.Members {
				if m.Key == event {
					if err := d.set(jsonc.Remove(d.data, h, i)); err != nil {
						return true, err
					}
					break
				}
			}
			return true, nil
		}
	}
}

// hasExactly reports whether the event array holds exactly one of tether's
// entries, alone in a group equal to want.
func (d *doc) hasExactly(arr *jsonc.Value, want []byte) bool {
	found := false
	for _, g := range arr.Elems {
		es := entries(g)
		n := 0
		for _, e := range es {
			if d.isTetherEntry(e) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		if found || n != 1 || !jsonEqual(d.text(g), want) {
			return false
		}
		found = true
	}
	return found
}

func jsonEqual(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// group is tether's group for ev, compact.
func group(ev EventSpec, command string, timeout int) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	if ev.Matcher != "" {
		fmt.Fprintf(&b, `"matcher":%s,`, marshalString(ev.Matcher))
	}
	fmt.Fprintf(&b, `"hooks":[{"name":%s,"type":"command","command":%s,"timeout":%d}]}`,
		marshalString(EntryName), marshalString(command), timeout)
	return b.Bytes()
}

func marshalString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func isInstalledEvent(name string) bool {
	for _, ev := range Events {
		if ev.Name == name {
			return true
		}
	}
	return false
}

// Merge returns data with tether's hook entries installed. When data already
// holds exactly tether's entries, the same bytes are returned.
func Merge(name string, data []byte, opts Options) ([]byte, error) {
	if opts.TetherPath == "" {
		return nil, errors.New("tether path: required")
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < 0 {
		return nil, fmt.Errorf("timeout: must be positive, got %d", timeout)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	d, err := parse(name, data)
	if err != nil {
		return nil, err
	}
	unit := claudesettings.IndentUnit(data)
	command := HookCommand(opts.TetherPath)
	h, err := d.hooks()
	if err != nil {
		return nil, err
	}
	if h == nil {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, ev := range Events {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `%s:[%s]`, marshalString(ev.Name), group(ev, command, timeout))
		}
		b.WriteByte('}')
		out, err := jsonc.Append(d.data, d.root, "hooks", b.Bytes(), unit)
		if err != nil {
			return nil, err
		}
		return out, d.set(out)
	}
	for _, m := range h.Members {
		if isInstalledEvent(m.Key) && m.Value.Kind != jsonc.Array {
			return nil, fmt.Errorf("%s: hooks.%s: want an array", name, m.Key)
		}
	}
	for _, ev := range Events {
		want := group(ev, command, timeout)
		h, _ := d.hooks()
		arr := h.Get(ev.Name)
		if arr != nil && d.hasExactly(arr, want) {
			continue
		}
		if _, err := d.removeAll(ev.Name, false); err != nil {
			return nil, err
		}
		h, _ = d.hooks()
		var out []byte
		if arr = h.Get(ev.Name); arr == nil {
			out, err = jsonc.Append(d.data, h, ev.Name, append(append([]byte{'['}, want...), ']'), unit)
		} else {
			out, err = jsonc.Append(d.data, arr, "", want, unit)
		}
		if err != nil {
			return nil, err
		}
		if err := d.set(out); err != nil {
			return nil, err
		}
	}
	// An entry of tether's under an event it does not install is stale:
	// install converges on exactly the entries of Events.
	h, _ = d.hooks()
	var stale []string
	for _, m := range h.Members {
		if !isInstalledEvent(m.Key) {
			stale = append(stale, m.Key)
		}
	}
	for _, k := range stale {
		if _, err := d.removeAll(k, true); err != nil {
			return nil, err
		}
	}
	return d.data, nil
}

// Remove returns data without tether's hook entries: a group, an event
// array or the "hooks" object goes only when that removal empties it. When
// data holds none, the same bytes are returned.
func Remove(name string, data []byte) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, nil
	}
	d, err := parse(name, data)
	if err != nil {
		return nil, err
	}
	h, err := d.hooks()
	if err != nil || h == nil {
		return data, err
	}
	var keys []string
	for _, m := range h.Members {
		keys = append(keys, m.Key)
	}
	changed := false
	for _, k := range keys {
		removed, err := d.removeAll(k, true)
		if err != nil {
			return nil, err
		}
		changed = changed || removed
	}
	if !changed {
		return data, nil
	}
	if h, _ := d.hooks(); h != nil && len(h.Members) == 0 {
		for i, m := range d.root.Members {
			if m.Key == "hooks" {
				if err := d.set(jsonc.Remove(d.data, d.root, i)); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	return d.data, nil
}

// Install merges tether's entries into the settings file at path (see
// claudesettings.InstallFile for the file's handling and the record).
func Install(path string, opts Options, dryRun bool) (claudesettings.Result, error) {
	return claudesettings.InstallFile(path, opts.RecordDir, dryRun, func(name string, data []byte) ([]byte, error) {
		return Merge(name, data, opts)
	})
}

// Uninstall removes tether's entries from the settings file at path, giving
// it back byte for byte when it is still what Install wrote (see
// claudesettings.UninstallFile).
func Uninstall(path, recordDir string, dryRun bool) (claudesettings.Result, error) {
	return claudesettings.UninstallFile(path, recordDir, dryRun, Remove)
}
