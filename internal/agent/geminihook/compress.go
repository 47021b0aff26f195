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

package geminihook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/agent/jsonc"
)

// DefaultCompressionThreshold is the fraction of the model's context window
// at which Gemini CLI compresses its history, unless the settings'
// model.compressionThreshold says otherwise.
const DefaultCompressionThreshold = 0.5

// transcriptTail bounds what Refine reads of a transcript: its last answers.
const transcriptTail = 1 << 20

// ContextWindow is the context window Gemini CLI 0.61 assumes for model (its
// tokenLimit): 256,000 tokens for the Gemma 4 models, 1,048,576 otherwise.
func ContextWindow(model string) int {
	switch model {
	case "gemma-4-31b-it", "gemma-4-26b-a4b-it":
		return 256000
	}
	return 1048576
}

// LastPromptTokens returns the prompt size the last model answer of a
// transcript (Gemini CLI's JSONL session file, or its tail) reported, with
// the model; ok is false when the tail holds no answer with a token count.
func LastPromptTokens(tail []byte) (tokens int, model string, ok bool) {
	lines := bytes.Split(tail, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if !bytes.Contains(line, []byte(`"tokens"`)) {
			continue
		}
		var m struct {
			Type   string `json:"type"`
			Model  string `json:"model"`
			Tokens *struct {
				Input int `json:"input"`
			} `json:"tokens"`
		}
		if json.Unmarshal(line, &m) != nil || m.Type != "gemini" || m.Tokens == nil {
			continue
		}
		return m.Tokens.Input, m.Model, true
	}
	return 0, "", false
}

// CompressionDue reports whether Gemini CLI compresses before its next model
// call, as it decides after running PreCompress: the last answer's prompt
// reached threshold times the model's context window.
func CompressionDue(tail []byte, threshold float64) bool {
	tokens, model, ok := LastPromptTokens(tail)
	return ok && threshold > 0 && float64(tokens) >= threshold*float64(ContextWindow(model))
}

// Refine makes a PreCompress with trigger auto a PreCompact when the
// compression is due (CompressionDue on the session's transcript, with the
// threshold of the project's or the user's settings): Gemini CLI runs that
// event before every model call, and compresses only past its threshold.
// It reads the transcript's tail and the settings files; anything it cannot
// read leaves ev as it is.
//
// It also sets the agent's version, which Gemini CLI does not tell its
// hooks: that of the @google/gemini-cli package whose bundle/gemini.js the
// hook's nearest node ancestor runs (Linux's /proc; elsewhere none).
func (Adapter) Refine(ev *agentevent.Event, getenv func(string) string) {
	if ev.AgentVersion == "" {
		ev.AgentVersion = clientVersion(os.Getppid())
	}
	if ev.Native != PreCompress || ev.Kind != "" || ev.TranscriptPath == "" {
		return
	}
	tail, err := readTail(ev.TranscriptPath, transcriptTail)
	if err != nil {
		return
	}
	if CompressionDue(tail, compressionThreshold(ev.CWD, getenv)) {
		ev.Kind, ev.Compacts = agentevent.PreCompact, true
	}
}

// compressionThreshold is model.compressionThreshold of the project's
// settings, else of the user's, else the default.
func compressionThreshold(cwd string, getenv func(string) string) float64 {
	home := getenv("GEMINI_CLI_HOME")
	if home == "" {
		home = getenv("HOME")
	}
	for _, dir := range []string{cwd, home} {
		if dir == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, ".gemini", "settings.json"))
		if err != nil {
			continue
		}
		if t, ok := settingsThreshold(data); ok {
			return t
		}
	}
	return DefaultCompressionThreshold
}

// settingsThreshold reads model.compressionThreshold of a settings file.
func settingsThreshold(data []byte) (float64, bool) {
	root, err := jsonc.Parse(data)
	if err != nil || root.Kind != jsonc.Object {
		return 0, false
	}
	model := root.Get("model")
	if model == nil || model.Kind != jsonc.Object {
		return 0, false
	}
	v := model.Get("compressionThreshold")
	if v == nil {
		return 0, false
	}
	var t float64
	if json.Unmarshal(data[v.Start:v.End], &t) != nil || t <= 0 {
		return 0, false
	}
	return t, true
}

func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, os.ErrInvalid
	}
	if off := fi.Size() - n; off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, err
		}
		// The first line is cut: drop it.
		r := bufio.NewReader(f)
		if _, err := r.ReadString('\n'); err != nil {
			return nil, err
		}
		return io.ReadAll(io.LimitReader(r, n))
	}
	data, err := io.ReadAll(io.LimitReader(f, n))
	return data, err
}

// clientVersion walks up from pid (at most a few ancestors: the shell
// Gemini CLI starts hooks with, a wrapper) to the process running Gemini
// CLI's script, and reads its package's version.
func clientVersion(pid int) string {
	for range 5 {
		if pid <= 1 {
			return ""
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			return ""
		}
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if v := packageVersion(string(arg)); v != "" {
				return v
			}
		}
		pid = parentPID(pid)
	}
	return ""
}

// packageVersion is the version of the @google/gemini-cli package whose
// bundle/gemini.js script is (after symbolic links), or "".
func packageVersion(script string) string {
	if !strings.Contains(script, "gemini") {
		return ""
	}
	real, err := filepath.EvalSymlinks(script)
	if err != nil || filepath.Base(real) != "gemini.js" || filepath.Base(filepath.Dir(real)) != "bundle" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(real)), "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &pkg) != nil || pkg.Name != "@google/gemini-cli" || len(pkg.Version) > 64 {
		return ""
	}
	return pkg.Version
}

// parentPID reads the parent of pid from /proc/PID/stat (after the command
// name, which may hold spaces and parentheses).
func parentPID(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
