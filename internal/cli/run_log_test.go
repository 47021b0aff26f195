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

package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func TestChooseLogEncoder(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		terminal bool
		want     string
	}{
		{name: "terminal, no flag: console", terminal: true, want: logConsole},
		{name: "pipe or file, no flag: json", terminal: false, want: logJSON},
		{name: "terminal, --zap-encoder=json", args: []string{"--zap-encoder=json"}, terminal: true, want: logJSON},
		{name: "file, --zap-encoder=console", args: []string{"--zap-encoder=console"}, terminal: false, want: logConsole},
		{name: "terminal, --zap-encoder=console", args: []string{"--zap-encoder", "console"}, terminal: true, want: logConsole},
		{name: "file, --zap-encoder=json", args: []string{"--zap-encoder=json"}, terminal: false, want: logJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := &zap.Options{}
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			bindLogFlags(fs, o)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if got := chooseLogEncoder(o, fs, c.terminal); got != c.want {
				t.Errorf("chooseLogEncoder = %q, want %q", got, c.want)
			}
			var buf bytes.Buffer
			log := zap.New(zap.UseFlagOptions(o), zap.WriteTo(&buf))
			log.Info("serving the local store", "pid", 42)
			line := strings.TrimSpace(buf.String())
			var fields map[string]any
			isJSON := json.Unmarshal([]byte(line), &fields) == nil
			if isJSON != (c.want == logJSON) {
				t.Fatalf("log line %q: JSON %v, want format %s", line, isJSON, c.want)
			}
			if isJSON {
				if fields["msg"] != "serving the local store" || fields["pid"] != float64(42) {
					t.Errorf("JSON log line %q lacks the message or its fields", line)
				}
				return
			}
			if !strings.Contains(line, "INFO") || !strings.Contains(line, "serving the local store") || !strings.Contains(line, `"pid": 42`) {
				t.Errorf("console log line %q lacks the level, the message or its fields", line)
			}
		})
	}
}
