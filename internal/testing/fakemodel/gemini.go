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

// Gemini is a scripted stand-in for the Gemini API (generativelanguage), for
// tests that drive the real Gemini CLI offline (GOOGLE_GEMINI_BASE_URL
// pointed at it). POST /v1beta/models/MODEL:generateContent answers one JSON
// response and :streamGenerateContent (alt=sse) the same as server-sent
// events; :countTokens counts nothing. A request that offers tools is a step
// of the agent's loop and gets the next scripted [Turn], whose tool calls
// become functionCall parts; any other request (the client's side calls: the
// next-speaker check, a compression's summary, a title) gets a short answer
// that does not consume the script: "{}" shaped by its response schema when
// it asks for JSON, Summary otherwise. Every request is recorded.
type Gemini struct {
	*httptest.Server
	script
	summary string
	tokens  int
}

// NewGemini starts a Gemini API server. Close it when done.
func NewGemini() *Gemini {
	s := &Gemini{tokens: 100, summary: "<state_snapshot>summary of the conversation so far</state_snapshot>"}
	s.fallback = Say("done")
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// SetSummary sets the text side calls get (a compression's summary).
func (s *Gemini) SetSummary(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.summary = text
}

// SetPromptTokens sets the promptTokenCount every answer reports (100 by
// default) unless its turn says otherwise (Turn.InputTokens). The client
// compresses its history when the count of the last answer passes its
// threshold, so a large count makes the next turn compress.
func (s *Gemini) SetPromptTokens(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = n
}

type geminiRequest struct {
	Tools            []json.RawMessage `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string          `json:"responseMimeType"`
		ResponseSchema   json.RawMessage `json:"responseSchema"`
		ResponseJSON     json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

func (s *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body, Turn: -1}
	_, method, _ := strings.Cut(r.URL.Path, ":")
	if r.Method != http.MethodPost {
		s.record(req)
		http.NotFound(w, r)
		return
	}
	switch method {
	case "countTokens":
		s.record(req)
		writeJSON(w, map[string]any{"totalTokens": 100})
		return
	case "generateContent", "streamGenerateContent":
	default:
		s.record(req)
		http.NotFound(w, r)
		return
	}
	var gr geminiRequest
	if err := json.Unmarshal(body, &gr); err != nil {
		s.record(req)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Agent = len(gr.Tools) > 0
	turn, _ := s.answer(&req, Turn{})
	s.mu.Lock()
	tokens, summary := s.tokens, s.summary
	s.mu.Unlock()
	var parts []map[string]any
	switch {
	case req.Agent:
		parts = turn.geminiParts()
		if turn.InputTokens > 0 {
			tokens = turn.InputTokens
		}
	case gr.GenerationConfig.ResponseMimeType == "application/json":
		parts = []map[string]any{{"text": sideJSON(gr.GenerationConfig.ResponseJSON, gr.GenerationConfig.ResponseSchema)}}
	default:
		parts = []map[string]any{{"text": summary}}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": tokens, "candidatesTokenCount": 10, "totalTokenCount": tokens + 10},
		"modelVersion":  "gemini-fake",
	}
	if method == "generateContent" {
		writeJSON(w, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	b, _ := json.Marshal(resp)
	_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sideJSON answers a side call that asks for JSON: the next-speaker check
// gets "user" (the turn is over), anything else an object with each required
// property set to a value of its type ("", 1, false, [] or {}).
func sideJSON(schemas ...json.RawMessage) string {
	for _, raw := range schemas {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if json.Unmarshal(raw, &schema) != nil || schema.Properties == nil {
			continue
		}
		out := map[string]any{}
		for _, k := range schema.Required {
			var prop struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(schema.Properties[k], &prop)
			switch strings.ToLower(prop.Type) {
			case "number", "integer":
				out[k] = 1
			case "boolean":
				out[k] = false
			case "array":
				out[k] = []any{}
			case "object":
				out[k] = map[string]any{}
			default:
				out[k] = ""
			}
		}
		if _, ok := schema.Properties["next_speaker"]; ok {
			out["next_speaker"] = "user"
			out["reasoning"] = "the model's turn is complete"
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	return "{}"
}

// geminiParts renders a turn as Gemini content parts: its text, then one
// functionCall per tool call. An empty turn answers "ok".
func (t Turn) geminiParts() []map[string]any {
	var out []map[string]any
	if t.Text != "" || len(t.Tools) == 0 {
		text := t.Text
		if text == "" {
			text = "ok"
		}
		out = append(out, map[string]any{"text": text})
	}
	for _, tu := range t.Tools {
		out = append(out, map[string]any{"functionCall": map[string]any{"name": tu.Name, "args": tu.Input}})
	}
	return out
}

// Shell is a turn that runs one command through Gemini CLI's shell tool.
func Shell(command string) Turn {
	return Turn{Tools: []ToolUse{{Name: "run_shell_command", Input: map[string]any{"command": command, "description": "run"}}}}
}
