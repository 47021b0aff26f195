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

// Package fakemodel is a scripted stand-in for the Anthropic Messages API,
// for tests that drive the real Claude Code CLI offline (ANTHROPIC_BASE_URL
// pointed at it). POST /v1/messages answers with the next scripted turn, as
// server-sent events when the request streams and as one JSON message
// otherwise; every request is recorded so a test can assert on what the client
// actually sent to the model. Requests that carry no tools (the client's side
// calls: titles, summaries of a compaction, quota probes) get a short text
// answer and do not consume the script, unless the script says otherwise.
// [Gemini] is the same for the Gemini API, which the Gemini CLI calls.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// ToolUse is one tool call the model makes.
type ToolUse struct {
	// Name is the tool, such as "Bash".
	Name string
	// Input is the tool's input, such as {"command": "ls"}.
	Input map[string]any
}

// Turn is one model answer: text, then tool calls. With no tool calls the
// turn ends the agent's loop (stop_reason end_turn).
type Turn struct {
	// Text is the answer's text block; empty means none.
	Text string
	// Tools are the tool_use blocks, in order.
	Tools []ToolUse
	// InputTokens is the input usage the answer reports (Responses and
	// Gemini: a large value makes Codex compact and Gemini CLI compress);
	// 0 means the server's default (100 unless Gemini.SetPromptTokens).
	InputTokens int
}

// Bash is a turn that runs one shell command through the Bash tool.
func Bash(command string) Turn {
	return Turn{Tools: []ToolUse{{Name: "Bash", Input: map[string]any{"command": command, "description": "run"}}}}
}

// Say is a turn that answers text and ends the loop.
func Say(text string) Turn { return Turn{Text: text} }

// Request is one request the client made.
type Request struct {
	// Method and Path are the HTTP method and URL path.
	Method, Path string
	// Body is the request body as sent.
	Body []byte
	// Agent is true for a /v1/messages request that offered tools: a step of
	// the agent's loop, not a side call.
	Agent bool
	// Turn is the index of the scripted turn answered, or -1.
	Turn int
}

// script is what every fake API keeps: the scripted turns, the answer once
// they run out, and every request. Its methods are safe for concurrent use.
type script struct {
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
	fallback Turn
}

// Push appends turns to the script.
func (s *script) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Pending is the number of scripted turns not yet answered.
func (s *script) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// Requests returns a copy of every request so far.
func (s *script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// AgentRequests returns the agent's requests (those that offered tools),
// from index from on (an index into this same list, so a test can take
// those after a point).
func (s *script) AgentRequests(from int) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Agent {
			out = append(out, r)
		}
	}
	if from > len(out) {
		from = len(out)
	}
	return out[from:]
}

func (s *script) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// answer records req and returns its turn: for an agent request the next
// scripted one (req.Turn says which) or the fallback, else side. n is the
// number of requests so far.
func (s *script) answer(req *Request, side Turn) (turn Turn, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	turn = side
	if req.Agent {
		turn = s.fallback
		if s.next < len(s.turns) {
			turn = s.turns[s.next]
			req.Turn = s.next
			s.next++
		}
	}
	s.requests = append(s.requests, *req)
	return turn, len(s.requests)
}

// Server is the fake Anthropic API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	script
}

// New starts a server. Close it when done.
func New() *Server {
	s := &Server{}
	s.fallback = Say("done")
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

type messagesRequest struct {
	Stream bool              `json:"stream"`
	Model  string            `json:"model"`
	Tools  []json.RawMessage `json:"tools"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body, Turn: -1}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		s.record(req)
		// count_tokens and anything else the client probes: nothing to say.
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			writeJSON(w, map[string]any{"input_tokens": 100})
			return
		}
		http.NotFound(w, r)
		return
	}
	var mr messagesRequest
	if err := json.Unmarshal(body, &mr); err != nil {
		s.record(req)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Agent = len(mr.Tools) > 0
	turn, n := s.answer(&req, Say("ok"))
	if mr.Model == "" {
		mr.Model = "claude-fake"
	}
	msgID := fmt.Sprintf("msg_fake_%d", n)
	blocks := turn.blocks(msgID)
	stop := "end_turn"
	if len(turn.Tools) > 0 {
		stop = "tool_use"
	}
	if !mr.Stream {
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": mr.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 10},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": mr.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1},
	}})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			// Split the input as a real stream does, so the client reassembles it.
			half := len(in) / 2
			for _, part := range []string{string(in[:half]), string(in[half:])} {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func (t Turn) blocks(msgID string) []map[string]any {
	var out []map[string]any
	if t.Text != "" || len(t.Tools) == 0 {
		text := t.Text
		if text == "" {
			text = "ok"
		}
		out = append(out, map[string]any{"type": "text", "text": text})
	}
	for i, tu := range t.Tools {
		out = append(out, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%s_%d", strings.TrimPrefix(msgID, "msg_"), i), "name": tu.Name, "input": tu.Input})
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
