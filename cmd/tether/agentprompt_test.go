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
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

func TestAgentPrompt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	c := openStore(t, dir).Client()
	putHook(t, c, &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Name: "add-rate-limit", Namespace: "team-a"},
		Spec:       v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "one"}}},
	})
	want, err := os.ReadFile(filepath.Join("..", "..", "internal", "agent", "prompt", "testdata", "namespaced.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, "--store", dir, "-n", "team-a", "agent", "prompt", "add-rate-limit")
	if code != 0 || out != string(want) {
		t.Errorf("agent prompt: exit %d, stderr %q, stdout:\n%s\nwant the golden file:\n%s", code, stderr, out, want)
	}
	if _, stderr, code := run(t, "--store", dir, "agent", "prompt", "add-rate-limit"); code != 2 || !strings.Contains(stderr, `"add-rate-limit" not found`) {
		t.Errorf("prompt for a Hook of another namespace: exit %d, stderr %q; want 2, not found", code, stderr)
	}
	if _, stderr, code := run(t, "--store", dir, "agent", "prompt"); code != 1 || !strings.Contains(stderr, "exactly one argument") {
		t.Errorf("prompt without a Hook: exit %d, stderr %q; want 1", code, stderr)
	}
}
