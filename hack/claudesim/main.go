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

// Command claudesim is a stand-in for Claude Code's hook runner that plays a
// scripted agent. See README.md for what it models and where that comes from.
//
//	claudesim -script SCRIPT [-resume-script SCRIPT] [-project DIR]
//	          [-transcript FILE] [-session ID]
//	          [-source startup|resume|clear|compact] [-user-settings FILE]
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"sigs.k8s.io/yaml"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("claudesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	project := fs.String("project", ".", "project directory: settings are read from DIR/.claude, hooks and tools run in DIR")
	scriptPath := fs.String("script", "", "the scripted agent, YAML or JSON (required)")
	resumeScript := fs.String("resume-script", "", "played instead of -script, with SessionStart source resume, when the transcript already holds a session: the agent was restarted")
	transcript := fs.String("transcript", "", "JSONL transcript, appended to (default DIR/.claudesim/transcript.jsonl)")
	session := fs.String("session", "", "session id (default: the script's, else random)")
	src := fs.String("source", "", "SessionStart source (default: the script's, else startup)")
	userSettings := fs.String("user-settings", "", "a user settings file to load before the project's")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "claudesim:", err)
		return 1
	}
	if *scriptPath == "" {
		return fail(fmt.Errorf("-script: required"))
	}
	dir, err := filepath.Abs(*project)
	if err != nil {
		return fail(err)
	}
	if *transcript == "" {
		*transcript = filepath.Join(dir, ".claudesim", "transcript.jsonl")
	}
	if *transcript, err = filepath.Abs(*transcript); err != nil {
		return fail(err)
	}
	resumed := false
	if *resumeScript != "" {
		if fi, err := os.Stat(*transcript); err == nil && fi.Size() > 0 {
			*scriptPath, resumed = *resumeScript, true
		}
	}
	data, err := os.ReadFile(*scriptPath)
	if err != nil {
		return fail(err)
	}
	var sc Script
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		return fail(fmt.Errorf("%s: %w", *scriptPath, err))
	}
	if err := sc.Validate(); err != nil {
		return fail(fmt.Errorf("%s: %w", *scriptPath, err))
	}
	sources, err := loadSettings(dir, *userSettings)
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(*transcript), 0o755); err != nil {
		return fail(err)
	}
	out, err := os.OpenFile(*transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = out.Close() }()
	id := *session
	if id == "" && resumed {
		// claude --continue and --resume keep the session id.
		id = lastSessionID(*transcript)
	}
	if id == "" {
		id = sc.SessionID
	}
	if id == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id = "claudesim-" + hex.EncodeToString(b)
	}
	source := *src
	if source == "" && resumed {
		source = "resume"
	}
	if source == "" {
		source = sc.Source
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &Sim{Project: dir, SessionID: id, Transcript: *transcript, Sources: sources, out: out}
	return s.Run(ctx, &sc, source)
}

// lastSessionID is the id of the last session a transcript holds, or "".
func lastSessionID(transcript string) string {
	data, err := os.ReadFile(transcript)
	if err != nil {
		return ""
	}
	id := ""
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e Entry
		if json.Unmarshal(line, &e) == nil && e.Kind == "session" {
			id = e.Reason
		}
	}
	return id
}
