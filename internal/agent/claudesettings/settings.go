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

// Package claudesettings merges tether's hook entries into a Claude Code
// settings file and removes them again.
//
// Claude Code reads hooks from the "hooks" key of its settings files:
//
//	{"hooks": {"<EventName>": [{"matcher": "<regex>", "hooks": [
//	    {"type": "command", "command": "...", "timeout": N}]}]}}
//
// tether installs one group per event in [Events], each holding one command
// hook that runs "<tether path> agent hook". A hook entry is tether's when its
// type is "command" and its command is exactly "<path> agent hook" where the
// base name of the (possibly quoted) first word is "tether"; see
// [IsTetherCommand]. Recognising any path lets a reinstall from a moved binary
// replace the old entry instead of adding a second one. An entry with extra
// arguments ("tether agent hook --store x") is the user's and is left alone.
//
// A tether entry under any other event (one an older tether installed, or a
// misspelt key) is stale and removed, so an install always ends with exactly
// one entry per event in [Events]. Every other key, event, group and hook is
// kept, in its order. Values tether
// does not touch keep their bytes (string escapes, number spellings); only the
// whitespace between tokens is rewritten, in the indentation the file already
// uses (a tab, or a run of spaces; two spaces by default), and the trailing
// newline is kept or left out as it was. A file that needs no change is not
// rewritten at all.
//
// Uninstall removes exactly tether's entries. A group, an event array or the
// "hooks" object is removed only when it becomes empty by that removal: one
// that was already empty stays. Since no state is kept outside the file, an
// event array that held nothing but tether's group before uninstall is removed
// even if the user had created it empty; Claude Code treats an absent and an
// empty event array alike. An install followed by an uninstall therefore gives
// back a document semantically equal to the original, and byte-equal when the
// original had no "hooks" key and was formatted as tether formats (see
// [Format]).
package claudesettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// Scope selects which settings file of Claude Code is edited.
type Scope string

const (
	// ScopeProject is DIR/.claude/settings.json, shared through the repository.
	ScopeProject Scope = "project"
	// ScopeLocal is DIR/.claude/settings.local.json, personal and not committed.
	ScopeLocal Scope = "local"
	// ScopeUser is ~/.claude/settings.json, for every project of the user.
	ScopeUser Scope = "user"
)

// DefaultTimeout is the timeout in seconds written into tether's hook
// entries. tether answers within 2 s; the margin covers a cold start.
const DefaultTimeout = 10

// HookSubcommand is what follows the tether path in tether's hook command.
const HookSubcommand = "agent hook"

// EventSpec is one Claude Code event tether installs a hook for.
type EventSpec struct {
	// Name is the event name, the key under "hooks".
	Name string
	// Matcher is the group's matcher; empty means the group has no
	// "matcher" key, which Claude Code reads as "match everything".
	Matcher string
	// Timeout is this event's timeout in seconds; 0 means the install's.
	Timeout int
}

// Dialect is an agent whose hooks file has Claude Code's shape (Codex's
// hooks.json has): which events tether installs there, and the --agent its
// command names. The zero Dialect, and nil, are Claude Code's.
type Dialect struct {
	// Agent is the value of `tether agent hook --agent` in the command;
	// empty for Claude Code, whose command has no flag.
	Agent string
	// Events are the events installed, in order; nil means Events.
	Events []EventSpec
	// Product names the agent in messages, as "Claude Code".
	Product string
	// Files names the agent's files in messages, as "Claude Code settings
	// files".
	Files string
}

func (d *Dialect) events() []EventSpec {
	if d == nil || d.Events == nil {
		return Events
	}
	return d.Events
}

func (d *Dialect) files() string {
	if d == nil || d.Files == "" {
		return "Claude Code settings files"
	}
	return d.Files
}

func (d *Dialect) product() string {
	if d == nil || d.Product == "" {
		return "Claude Code"
	}
	return d.Product
}

func (d *Dialect) subcommand() string {
	if d == nil || d.Agent == "" {
		return HookSubcommand
	}
	return HookSubcommand + " --agent " + d.Agent
}

// IsTetherCommand reports whether command is tether's hook command of this
// dialect: IsTetherCommand with " --agent AGENT" after "agent hook".
func (d *Dialect) IsTetherCommand(command string) bool {
	rest, ok := strings.CutSuffix(command, " "+d.subcommand())
	if !ok {
		return false
	}
	word, ok := unquoteWord(rest)
	return ok && word != "" && filepath.Base(word) == "tether"
}

// Events are the events tether installs, in the order they are written.
var Events = []EventSpec{
	{Name: "SessionStart"},
	{Name: "UserPromptSubmit"},
	{Name: "PostToolUse", Matcher: "*"},
	{Name: "PostToolUseFailure", Matcher: "*"},
	{Name: "PreCompact"},
	{Name: "Stop"},
	{Name: "SessionEnd"},
}

// Path returns the settings file of scope. dir is the project root (used by
// the project and local scopes) and home the user's home directory (used by
// the user scope).
func Path(scope Scope, dir, home string) (string, error) {
	switch scope {
	case ScopeProject, "":
		return filepath.Join(dir, ".claude", "settings.json"), nil
	case ScopeLocal:
		return filepath.Join(dir, ".claude", "settings.local.json"), nil
	case ScopeUser:
		if home == "" {
			return "", errors.New("scope user: no home directory")
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	default:
		return "", fmt.Errorf("scope: unknown value %q: want project, local or user", scope)
	}
}

// Options configure an install.
type Options struct {
	// TetherPath is the tether executable the hooks run. Required.
	TetherPath string
	// Timeout is the hook timeout in seconds; 0 means DefaultTimeout.
	Timeout int
	// RecordDir is where Install records what it changed, for Uninstall to
	// give the file back byte for byte; empty records nothing.
	RecordDir string
	// Dialect is the agent whose file it is; nil is Claude Code.
	Dialect *Dialect
}

// HookCommand returns the command tether's entries run: the tether path,
// single-quoted when it holds anything but [A-Za-z0-9_./+-], then
// " agent hook".
func HookCommand(tetherPath string) string {
	return shellQuote(tetherPath) + " " + HookSubcommand
}

// IsTetherCommand reports whether command is one of tether's hook commands:
// a first word (bare, single- or double-quoted) whose base name is "tether",
// followed by exactly " agent hook".
func IsTetherCommand(command string) bool {
	return (*Dialect)(nil).IsTetherCommand(command)
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unquoteWord reads s as exactly one shell word made of bare, single-quoted
// and double-quoted parts.
func unquoteWord(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return "", false
			}
			i++
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')', '$', '`':
			return "", false
		case '\\':
			if i+1 >= len(s) {
				return "", false
			}
			b.WriteByte(s[i+1])
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

// isTetherEntry reports whether raw is a hook entry of tether's. Keys match
// exactly, as in Claude Code ("TYPE" is not "type").
func isTetherEntry(raw json.RawMessage, d *Dialect) bool {
	if kindOf(raw) != "an object" {
		return false
	}
	o, err := decodeObject(raw)
	if err != nil {
		return false
	}
	var typ, command string
	t, _ := o.get("type")
	c, _ := o.get("command")
	if json.Unmarshal(t, &typ) != nil || json.Unmarshal(c, &command) != nil {
		return false
	}
	return typ == "command" && d.IsTetherCommand(command)
}

// ParseError is a settings file tether refuses to rewrite because it is not
// valid JSON. Line and Column are 1-based; Column counts bytes.
type ParseError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

// Error implements error as "FILE:LINE:COL: MSG".
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// position returns the 1-based line and column of byte offset off in data.
func position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col = off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// parse validates data as a JSON object and decodes its top level.
func parse(name string, data []byte, d *Dialect) (object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return object{}, nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset is just past the offending byte; at the end of the
			// input there is none, so point past the last byte.
			off := int(se.Offset) - 1
			if int(se.Offset) >= len(data) && strings.Contains(se.Error(), "unexpected end") {
				off = len(data)
			}
			off = max(off, 0)
			line, col := position(data, off)
			msg := se.Error()
			if off+1 < len(data) && data[off] == '/' && (data[off+1] == '/' || data[off+1] == '*') {
				msg = "comments are not allowed: " + d.files() + " are plain JSON; remove the comment and run again"
			}
			return nil, &ParseError{File: name, Line: line, Column: col, Msg: "refusing to rewrite a file that is not valid JSON: " + msg}
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if path, off, dup := checkDuplicateKeys(data); dup {
		line, col := position(data, int(off))
		return nil, &ParseError{File: name, Line: line, Column: col,
			Msg: fmt.Sprintf("refusing to rewrite a file with a duplicate key %q: %s would silently use the last one; remove the other", path, d.product())}
	}
	top, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: top level: %w", name, err)
	}
	return top, nil
}

// Merge returns data with tether's hook entries installed. name is used in
// error messages only. When data already holds exactly tether's entries, the
// same bytes are returned.
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
	d := opts.Dialect
	top, err := parse(name, data, d)
	if err != nil {
		return nil, err
	}
	hooks := object{}
	if raw, ok := top.get("hooks"); ok {
		if hooks, err = decodeObject(raw); err != nil {
			return nil, fmt.Errorf("%s: hooks: %w", name, err)
		}
	}
	command := shellQuote(opts.TetherPath) + " " + d.subcommand()
	changed := false
	for _, ev := range d.events() {
		t := timeout
		if ev.Timeout > 0 {
			t = ev.Timeout
		}
		entry := object{
			{key: "type", value: marshalString("command")},
			{key: "command", value: marshalString(command)},
			{key: "timeout", value: json.RawMessage(fmt.Sprint(t))},
		}.marshal()
		var groups []json.RawMessage
		if raw, ok := hooks.get(ev.Name); ok {
			if groups, err = decodeArray(raw); err != nil {
				return nil, fmt.Errorf("%s: hooks.%s: %w", name, ev.Name, err)
			}
		}
		group := object{}
		if ev.Matcher != "" {
			group = group.set("matcher", marshalString(ev.Matcher))
		}
		group = group.set("hooks", marshalArray([]json.RawMessage{entry}))
		if hasExactly(groups, group.marshal(), d) {
			continue
		}
		groups, _ = removeTether(groups, d)
		groups = append(groups, group.marshal())
		hooks = hooks.set(ev.Name, marshalArray(groups))
		changed = true
	}
	// An entry of tether's under an event it does not install (one an older
	// tether wrote, or a misspelt key) is stale: install converges on exactly
	// the entries of Events, so uninstall and reinstall give the same file.
	for _, m := range append(object(nil), hooks...) {
		if isInstalledEvent(m.key, d) {
			continue
		}
		groups, err := decodeArray(m.value)
		if err != nil {
			continue
		}
		kept, removed := removeTether(groups, d)
		if !removed {
			continue
		}
		changed = true
		if len(kept) == 0 {
			hooks = hooks.del(m.key)
		} else {
			hooks = hooks.set(m.key, marshalArray(kept))
		}
	}
	if !changed {
		return data, nil
	}
	top = top.set("hooks", hooks.marshal())
	return Format(top.marshal(), data)
}

// Remove returns data without tether's hook entries; see the package comment
// for which containers go with them. When data holds none, the same bytes are
// returned.
func Remove(name string, data []byte) ([]byte, error) {
	return (*Dialect)(nil).Remove(name, data)
}

// Remove is Remove of the dialect's entries.
func (d *Dialect) Remove(name string, data []byte) ([]byte, error) {
	top, err := parse(name, data, d)
	if err != nil {
		return nil, err
	}
	raw, ok := top.get("hooks")
	if !ok {
		return data, nil
	}
	hooks, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: hooks: %w", name, err)
	}
	changed := false
	for _, m := range append(object(nil), hooks...) {
		groups, err := decodeArray(m.value)
		if err != nil {
			continue // not an event array tether could have written
		}
		kept, removed := removeTether(groups, d)
		if !removed {
			continue
		}
		changed = true
		if len(kept) == 0 {
			hooks = hooks.del(m.key)
		} else {
			hooks = hooks.set(m.key, marshalArray(kept))
		}
	}
	if !changed {
		return data, nil
	}
	if len(hooks) == 0 {
		top = top.del("hooks")
	} else {
		top = top.set("hooks", hooks.marshal())
	}
	return Format(top.marshal(), data)
}

func isInstalledEvent(name string, d *Dialect) bool {
	for _, ev := range d.events() {
		if ev.Name == name {
			return true
		}
	}
	return false
}

// hasExactly reports whether groups hold exactly one tether entry, and it is
// alone in a group equal to want.
func hasExactly(groups []json.RawMessage, want json.RawMessage, d *Dialect) bool {
	found := false
	for _, g := range groups {
		entries := groupEntries(g)
		n := 0
		for _, e := range entries {
			if isTetherEntry(e, d) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		if found || n != 1 || !jsonEqual(g, want) {
			return false
		}
		found = true
	}
	return found
}

// groupEntries returns the hook entries of a group, or nil when g is not a
// group tether understands.
func groupEntries(g json.RawMessage) []json.RawMessage {
	if kindOf(g) != "an object" {
		return nil
	}
	o, err := decodeObject(g)
	if err != nil {
		return nil
	}
	raw, ok := o.get("hooks")
	if !ok {
		return nil
	}
	entries, err := decodeArray(raw)
	if err != nil {
		return nil
	}
	return entries
}

// removeTether drops tether's entries from groups, and a group they leave
// empty. It reports whether anything was removed.
func removeTether(groups []json.RawMessage, d *Dialect) ([]json.RawMessage, bool) {
	var out []json.RawMessage
	removed := false
	for _, g := range groups {
		entries := groupEntries(g)
		var kept []json.RawMessage
		for _, e := range entries {
			if !isTetherEntry(e, d) {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(entries) {
			out = append(out, g)
			continue
		}
		removed = true
		if len(kept) == 0 {
			continue
		}
		o, _ := decodeObject(g)
		out = append(out, o.set("hooks", marshalArray(kept)).marshal())
	}
	return out, removed
}

func jsonEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// Format indents compact JSON the way tether writes settings files: with the
// indentation unit the original file uses (the whitespace before the first
// indented line; two spaces when there is none) and with a trailing newline
// unless the original is non-empty and ends without one.
func Format(compact, original []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", detectIndent(original)); err != nil {
		return nil, err
	}
	trimmed := bytes.TrimRight(original, " \t\r")
	if len(trimmed) == 0 || trimmed[len(trimmed)-1] == '\n' {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

func detectIndent(data []byte) string {
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		ws := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if len(ws) == 0 || len(ws) == len(bytes.TrimRight(line, "\r")) {
			continue
		}
		if ws[0] == '\t' {
			return "\t"
		}
		return strings.Repeat(" ", len(ws)-len(bytes.TrimLeft(ws, " ")))
	}
	return "  "
}

// Result is the outcome of Install or Uninstall.
type Result struct {
	// Path is the settings file (after resolving a symbolic link).
	Path string
	// Before is the file's content before, nil when it did not exist.
	Before []byte
	// After is the resulting content, also under a dry run.
	After []byte
	// Changed reports whether After differs from Before (and, unless a dry
	// run, was written).
	Changed bool
}

// Install merges tether's entries into the settings file at path, creating it
// (and its directory) when missing, and writes it atomically unless dryRun.
// A file that is not valid JSON is refused with a *ParseError and left as it
// is. With opts.RecordDir, it records what it changed there, for Uninstall.
func Install(path string, opts Options, dryRun bool) (Result, error) {
	return InstallFile(path, opts.RecordDir, dryRun, func(name string, data []byte) ([]byte, error) {
		return Merge(name, data, opts)
	})
}

// EditFunc computes a hooks file's new content from its content (empty when
// it does not exist); name is the file, for error messages.
type EditFunc func(name string, data []byte) ([]byte, error)

// InstallFile is Install with the merge of another agent's hooks file: it
// writes what merge computes atomically (unless dryRun), creating the file
// and its directory when missing, and with recordDir records what it
// changed there, for UninstallFile to give the file back byte for byte.
func InstallFile(path, recordDir string, dryRun bool, merge EditFunc) (Result, error) {
	var created []string
	res, err := edit(path, dryRun, true, merge, func(res *Result) { created = missingDirs(filepath.Dir(res.Path)) })
	if err != nil || dryRun || recordDir == "" || !res.Changed {
		return res, err
	}
	r := readRecord(recordDir, res.Path)
	if r == nil || (res.Before != nil && !bytes.Equal(res.Before, r.Installed)) {
		// A first install, or the file changed since the recorded one: what
		// it held before this install is what uninstall gives back.
		r = &record{Path: res.Path, Existed: res.Before != nil, Before: res.Before, CreatedDirs: created}
	}
	r.Installed = res.After
	if err := writeRecord(recordDir, r); err != nil {
		return res, err
	}
	return res, nil
}

// Uninstall removes tether's entries from the settings file at path. A missing
// file is no change. When recordDir holds Install's record and the file is
// still exactly what Install wrote, the file is given back byte for byte: its
// content before, or, when Install created it, no file and none of the empty
// directories Install created. Otherwise tether's entries are removed as
// Remove does.
func Uninstall(path, recordDir string, dryRun bool) (Result, error) {
	return UninstallDialect(path, recordDir, nil, dryRun)
}

// UninstallDialect is Uninstall of the dialect's entries.
func UninstallDialect(path, recordDir string, d *Dialect, dryRun bool) (Result, error) {
	return UninstallFile(path, recordDir, dryRun, d.Remove)
}

// UninstallFile is Uninstall with the removal of another agent's hooks
// file: the file goes back to what InstallFile's record holds when it is
// still exactly what InstallFile wrote, and otherwise loses what remove
// takes out.
func UninstallFile(path, recordDir string, dryRun bool, remove EditFunc) (Result, error) {
	res, err := edit(path, dryRun, false, func(name string, data []byte) ([]byte, error) {
		if r := readRecord(recordDir, resolved(path)); r != nil && bytes.Equal(data, r.Installed) {
			return nil, errRestore
		}
		return remove(name, data)
	}, nil)
	if errors.Is(err, errRestore) {
		r := readRecord(recordDir, res.Path)
		if err := restore(r, res.Before, dryRun, &res); err != nil {
			return res, err
		}
		if !dryRun {
			dropRecord(recordDir, res.Path)
		}
		return res, nil
	}
	if err == nil && !dryRun && res.Changed {
		dropRecord(recordDir, res.Path)
	}
	return res, err
}

// IndentUnit is the indentation unit data uses: the whitespace before its
// first indented line, two spaces when there is none.
func IndentUnit(data []byte) string { return detectIndent(data) }

// errRestore tells Uninstall that the record, not Remove, answers.
var errRestore = errors.New("restore from the record")

func resolved(path string) string {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		return target
	}
	return path
}

func edit(path string, dryRun, create bool, f EditFunc, beforeWrite func(*Result)) (Result, error) {
	res := Result{Path: resolved(path)}
	data, err := os.ReadFile(res.Path)
	switch {
	case err == nil:
		res.Before = data
	case errors.Is(err, os.ErrNotExist):
		if !create {
			return res, nil
		}
	default:
		return res, err
	}
	after, err := f(path, data)
	if err != nil {
		return res, err
	}
	res.After = after
	res.Changed = res.Before == nil || !bytes.Equal(after, res.Before)
	if !res.Changed || dryRun {
		return res, nil
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(res.Path); err == nil {
		perm = fi.Mode().Perm()
	}
	if beforeWrite != nil {
		beforeWrite(&res)
	}
	if err := os.MkdirAll(filepath.Dir(res.Path), 0o755); err != nil {
		return res, err
	}
	if _, err := atomicfs.WriteFileIfChanged(res.Path, after, perm); err != nil {
		return res, err
	}
	return res, nil
}
