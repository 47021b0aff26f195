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

package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// TestDescribeShowsEffectiveDefaults checks that describe hook shows the
// staleAfter, checkpointInterval and maxCheckpoints in effect and where
// each comes from, never <unset> or 0.
func TestDescribeShowsEffectiveDefaults(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "store")
	store := openStore(t, dir)
	seed(t, store.Client(), "running.yaml")
	capped := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "capped"},
		Spec:       v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "only"}}, MaxCheckpoints: 3},
	}
	if err := store.Client().Create(context.Background(), capped); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(root, "tether.yaml")
	if err := os.WriteFile(cfgFile, []byte("checkpointInterval: 2m\nmaxCheckpoints: 20\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		want   []string
		config bool
	}{
		{"spec and built in", []string{"describe", "hook", "running-example"}, []string{
			"Stale After: 5m0s (spec)", "Checkpoint Interval: 5m0s (built-in default)", "Max Checkpoints: 50 (built-in default)"}, false},
		{"spec, file and built in", []string{"describe", "hook", "running-example"}, []string{
			"Stale After: 5m0s (spec)", "Checkpoint Interval: 2m0s (config file " + cfgFile + ")", "Max Checkpoints: 20 (config file " + cfgFile + ")"}, true},
		{"spec over the file", []string{"describe", "hook", "capped"}, []string{
			"Stale After: 5m0s (built-in default)", "Checkpoint Interval: 2m0s (config file " + cfgFile + ")", "Max Checkpoints: 3 (spec)"}, true},
	}
	spaces := regexp.MustCompile(`[ \t]+`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--store", dir}, tc.args...)
			if tc.config {
				args = append(args, "--config", cfgFile)
			}
			cmd := exec.Command(tetherBin, args...)
			cmd.Env = append(os.Environ(), "TETHER_HOME="+filepath.Join(root, "home"))
			out, stderr, code := runCommand(t, cmd)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			flat := spaces.ReplaceAllString(out, " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, bad := range []string{"<unset>", "Max Checkpoints: 0"} {
				if strings.Contains(flat, bad) {
					t.Errorf("output shows %q:\n%s", bad, out)
				}
			}
		})
	}
}
