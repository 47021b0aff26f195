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

package manifest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

const durationHook = `apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: a
spec:
  goal: g
  staleAfter: 5m
  checkpointInterval: 5m
  retention:
    completed: 720h
    failed: 720h
    abandoned: 168h
  steps:
  - name: one
    validate:
    - command: ["true"]
      timeout: 1m
  - name: two
    validate:
    - command: ["true"]
    - command: ["false"]
      timeout: 2m
`

const durationWorker = `apiVersion: agents.tether.dev/v1alpha1
kind: Worker
metadata:
  name: w
spec:
  command: [sleep, "1"]
  heartbeatTimeout: 2m
  restart:
    auto: true
    window: 10m
`

// TestDurationErrorsNameFieldAndLine replaces each duration of a Hook and a
// Worker by values Go cannot decode and requires the error to name the
// field's path and line, not line 1 of the document.
func TestDurationErrorsNameFieldAndLine(t *testing.T) {
	tests := []struct {
		doc, old, new, field string
		line                 int
	}{
		{durationHook, "staleAfter: 5m", "staleAfter: %s", "spec.staleAfter", 7},
		{durationHook, "checkpointInterval: 5m", "checkpointInterval: %s", "spec.checkpointInterval", 8},
		{durationHook, "completed: 720h", "completed: %s", "spec.retention.completed", 10},
		{durationHook, "failed: 720h", "failed: %s", "spec.retention.failed", 11},
		{durationHook, "abandoned: 168h", "abandoned: %s", "spec.retention.abandoned", 12},
		{durationHook, "timeout: 1m", "timeout: %s", "spec.steps[0].validate[0].timeout", 17},
		{durationHook, "timeout: 2m", "timeout: %s", "spec.steps[1].validate[1].timeout", 22},
		{durationWorker, "heartbeatTimeout: 2m", "heartbeatTimeout: %s", "spec.heartbeatTimeout", 7},
		{durationWorker, "window: 10m", "window: %s", "spec.restart.window", 10},
	}
	bad := []struct{ value, want string }{
		{"2562048h", `invalid duration "2562048h"`},
		{"99999999999999999999h", "invalid duration"},
		{"5 minutes", `unknown unit " minutes"`},
		{"[1]", "invalid value"},
		{"{a: 1}", "invalid value"},
		{"300", "invalid value"},
	}
	scheme := newScheme(t)
	for _, tt := range tests {
		for _, b := range bad {
			t.Run(tt.field+"="+b.value, func(t *testing.T) {
				input := strings.Replace(tt.doc, tt.old, strings.Replace(tt.new, "%s", b.value, 1), 1)
				_, err := manifest.Decode("task.yaml", []byte(input), scheme)
				var derr *manifest.Error
				if !errors.As(err, &derr) {
					t.Fatalf("error %v is not a *manifest.Error", err)
				}
				if derr.Field != tt.field || derr.Line != tt.line {
					t.Errorf("located at %s line %d, want %s line %d: %v", derr.Field, derr.Line, tt.field, tt.line, err)
				}
				if !strings.Contains(err.Error(), b.want) {
					t.Errorf("error %q does not contain %q", err, b.want)
				}
			})
		}
	}
}

// TestSeveralBadDurationsEachWithItsOwnValue breaks several durations of one
// document and requires the error to locate the first in the input with
// its own value, and to name every other with its line and value, in the
// order of the input: the whole-document decode's error quoted whichever
// value it met first, under the path of another field.
func TestSeveralBadDurationsEachWithItsOwnValue(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		replace  [][2]string
		field    string
		line     int
		want     []string
		notFirst string
	}{
		{
			name:    "hook staleAfter and retention",
			doc:     durationHook,
			replace: [][2]string{{"staleAfter: 5m", "staleAfter: 1y"}, {"completed: 720h", "completed: 99999999999999999999h"}},
			field:   "spec.staleAfter", line: 7,
			want:     []string{`task.yaml:7 (document 1): spec.staleAfter: time: unknown unit "y" in duration "1y"`, `; line 10: spec.retention.completed: time: invalid duration "99999999999999999999h"`},
			notFirst: "99999999999999999999h",
		},
		{
			name:    "hook retention before a validate timeout",
			doc:     durationHook,
			replace: [][2]string{{"timeout: 2m", "timeout: 2562048h"}, {"abandoned: 168h", "abandoned: soon"}, {"checkpointInterval: 5m", "checkpointInterval: 300"}},
			field:   "spec.checkpointInterval", line: 8,
			want: []string{"task.yaml:8 (document 1): spec.checkpointInterval: invalid value: number",
				`; line 12: spec.retention.abandoned: time: invalid duration "soon"`,
				`; line 22: spec.steps[1].validate[1].timeout: time: invalid duration "2562048h"`},
			notFirst: "2562048h",
		},
		{
			name:    "worker window and heartbeatTimeout",
			doc:     durationWorker,
			replace: [][2]string{{"window: 10m", "window: 2562048h"}, {"heartbeatTimeout: 2m", "heartbeatTimeout: 1y"}},
			field:   "spec.heartbeatTimeout", line: 7,
			want:     []string{`task.yaml:7 (document 1): spec.heartbeatTimeout: time: unknown unit "y" in duration "1y"`, `; line 10: spec.restart.window: time: invalid duration "2562048h"`},
			notFirst: "2562048h",
		},
	}
	scheme := newScheme(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := tt.doc
			for _, r := range tt.replace {
				input = strings.Replace(input, r[0], r[1], 1)
			}
			_, err := manifest.Decode("task.yaml", []byte(input), scheme)
			var derr *manifest.Error
			if !errors.As(err, &derr) {
				t.Fatalf("error %v is not a *manifest.Error", err)
			}
			if derr.Field != tt.field || derr.Line != tt.line {
				t.Errorf("located at %s line %d, want %s line %d: %v", derr.Field, derr.Line, tt.field, tt.line, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if first, _, _ := strings.Cut(err.Error(), ";"); strings.Contains(first, tt.notFirst) {
				t.Errorf("the first field's error quotes another field's value %q: %q", tt.notFirst, first)
			}
		})
	}
}
