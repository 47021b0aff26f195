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
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

type geminiAnswer struct {
	Candidates []struct {
		Content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         string `json:"text"`
				FunctionCall *struct {
					Name string         `json:"name"`
					Args map[string]any `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata struct {
		PromptTokenCount int `json:"promptTokenCount"`
	} `json:"usageMetadata"`
}

func postGemini(t *testing.T, url, body string) (string, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Content-Type"), string(b)
}

// decodeSSE returns the JSON of each "data:" line of an event stream.
func decodeSSE(t *testing.T, body string) []geminiAnswer {
	t.Helper()
	var out []geminiAnswer
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(strings.TrimRight(sc.Text(), "\r"), "data: ")
		if !ok {
			continue
		}
		var a geminiAnswer
		if err := json.Unmarshal([]byte(data), &a); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, a)
	}
	return out
}

func TestGeminiAnswers(t *testing.T) {
	const tools = `{"contents":[{"role":"user","parts":[{"text":"go"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`
	tests := []struct {
		name     string
		method   string
		body     string
		wantType string
		wantText string
		wantCall string // "NAME COMMAND"
		agent    bool
		turn     int
	}{
		{name: "agent step, streamed", method: "streamGenerateContent?alt=sse", body: tools, wantType: "text/event-stream", wantCall: "run_shell_command make test", agent: true, turn: 0},
		{name: "agent step, JSON", method: "generateContent", body: tools, wantType: "application/json", wantText: "all done", agent: true, turn: 1},
		{name: "script exhausted", method: "generateContent", body: tools, wantType: "application/json", wantText: "done", agent: true, turn: -1},
		{name: "next-speaker check", method: "generateContent",
			body:     `{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string"}},"required":["reasoning","next_speaker"]}}}`,
			wantType: "application/json", wantText: `{"next_speaker":"user","reasoning":"the model's turn is complete"}`, turn: -1},
		{name: "router classifier", method: "generateContent",
			body:     `{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"complexity_reasoning":{"type":"string"},"complexity_score":{"type":"integer"}},"required":["complexity_reasoning","complexity_score"]}}}`,
			wantType: "application/json", wantText: `{"complexity_reasoning":"","complexity_score":1}`, turn: -1},
		{name: "compression summary", method: "generateContent", body: `{"contents":[{"role":"user","parts":[{"text":"summarise"}]}]}`,
			wantType: "application/json", wantText: "<state_snapshot>summary of the conversation so far</state_snapshot>", turn: -1},
	}
	s := NewGemini()
	defer s.Close()
	s.Push(Shell("make test"), Say("all done"))
	s.SetPromptTokens(700000)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctype, body := postGemini(t, s.URL+"/v1beta/models/gemini-fake:"+tt.method, tt.body)
			if !strings.HasPrefix(ctype, tt.wantType) {
				t.Fatalf("Content-Type %q, want %q", ctype, tt.wantType)
			}
			var a geminiAnswer
			if tt.wantType == "text/event-stream" {
				as := decodeSSE(t, body)
				if len(as) != 1 {
					t.Fatalf("%d events, want 1: %s", len(as), body)
				}
				a = as[0]
			} else if err := json.Unmarshal([]byte(body), &a); err != nil {
				t.Fatal(err)
			}
			if len(a.Candidates) != 1 || a.Candidates[0].FinishReason != "STOP" || a.Candidates[0].Content.Role != "model" {
				t.Fatalf("answer %s", body)
			}
			if a.UsageMetadata.PromptTokenCount != 700000 {
				t.Errorf("promptTokenCount %d, want 700000", a.UsageMetadata.PromptTokenCount)
			}
			var text, call string
			for _, p := range a.Candidates[0].Content.Parts {
				text += p.Text
				if p.FunctionCall != nil {
					call = p.FunctionCall.Name + " " + p.FunctionCall.Args["command"].(string)
				}
			}
			if text != tt.wantText && tt.wantText != "" || call != tt.wantCall {
				t.Errorf("text %q call %q, want %q %q", text, call, tt.wantText, tt.wantCall)
			}
			r := s.Requests()[i]
			if r.Agent != tt.agent || r.Turn != tt.turn || string(r.Body) != tt.body {
				t.Errorf("recorded agent=%v turn=%d body=%s, want %v %d", r.Agent, r.Turn, r.Body, tt.agent, tt.turn)
			}
		})
	}
	if got := len(s.AgentRequests(1)); got != 2 {
		t.Errorf("AgentRequests(1) = %d, want 2", got)
	}
	if s.Pending() != 0 {
		t.Errorf("Pending = %d", s.Pending())
	}
	if ctype, _ := postGemini(t, s.URL+"/v1beta/models/gemini-fake:countTokens", `{}`); !strings.HasPrefix(ctype, "application/json") {
		t.Errorf("countTokens: %s", ctype)
	}
}
