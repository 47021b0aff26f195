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

package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Responses is a scripted stand-in for the OpenAI Responses API, for tests
// that drive the real Codex CLI offline (a custom model provider whose
// base_url points at URL+"/v1"). POST /v1/responses answers with the next
// scripted turn as server-sent events (response.created, one
// response.output_item.done per item, response.completed); every request is
// recorded. A Bash tool call of the script becomes a call of whichever shell
// tool the request offers (shell_command, exec_command or shell). Requests
// that offer no tools (a compaction's summary, titles) get a short text
// answer and do not consume the script. Its methods are safe for concurrent
// use.
type Responses struct {
	*httptest.Server
	script
}

// NewResponses starts a Responses server. Close it when done.
func NewResponses() *Responses {
	s := &Responses{}
	s.fallback = Say("done")
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

type responsesRequest struct {
	Model string `json:"model"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// shellTool is the name of the shell tool the request offers and how it
// takes the command line.
func (r responsesRequest) shellTool(command string) (string, map[string]any) {
	offered := map[string]bool{}
	for _, t := range r.Tools {
		offered[t.Name] = true
	}
	switch {
	case offered["shell_command"]:
		return "shell_command", map[string]any{"command": command}
	case offered["exec_command"]:
		return "exec_command", map[string]any{"cmd": command}
	}
	return "shell", map[string]any{"command": []string{"bash", "-lc", command}}
}

func (s *Responses) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body, Turn: -1}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		s.record(req)
		if strings.HasSuffix(r.URL.Path, "/models") {
			writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		http.NotFound(w, r)
		return
	}
	var rr responsesRequest
	if err := json.Unmarshal(body, &rr); err != nil {
		s.record(req)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Agent = len(rr.Tools) > 0
	turn, n := s.answer(&req, Say("ok"))

	respID := fmt.Sprintf("resp_fake_%d", n)
	var items []map[string]any
	if turn.Text != "" || len(turn.Tools) == 0 {
		text := turn.Text
		if text == "" {
			text = "ok"
		}
		items = append(items, map[string]any{
			"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_fake_%d", n), "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
		})
	}
	for i, tu := range turn.Tools {
		name, args := tu.Name, tu.Input
		if name == "Bash" {
			cmd, _ := tu.Input["command"].(string)
			name, args = rr.shellTool(cmd)
		}
		a, _ := json.Marshal(args)
		items = append(items, map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_fake_%d_%d", n, i), "status": "completed",
			"call_id": fmt.Sprintf("call_fake_%d_%d", n, i), "name": name, "arguments": string(a),
		})
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		data["type"] = event
		b, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	in := turn.InputTokens
	if in == 0 {
		in = 100
	}
	model := rr.Model
	if model == "" {
		model = "gpt-fake"
	}
	send("response.created", map[string]any{"response": map[string]any{"id": respID, "object": "response", "model": model, "status": "in_progress"}})
	for i, it := range items {
		send("response.output_item.added", map[string]any{"output_index": i, "item": it})
		send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	send("response.completed", map[string]any{"response": map[string]any{
		"id": respID, "object": "response", "model": model, "status": "completed", "output": items,
		"usage": map[string]any{
			"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": in + 10,
		},
	}})
}
