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

package manifestsync_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/kubectl/manifestsync"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

func hookDoc(name, goal string) string {
	return "apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata:\n  name: " + name + "\nspec:\n  goal: " + goal + "\n  steps:\n  - name: one\n"
}

// TestSync walks one directory through the changes a person makes and
// checks the store after each full sync.
func TestSync(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	store := testsupport.Store(t, t.TempDir())
	dir := t.TempDir()
	var logged strings.Builder
	syncer := &manifestsync.Syncer{
		Dir: dir, Client: store.Client(), Mapper: store.RESTMapper(), Scheme: s, Namespace: "default",
		Kinds: []schema.GroupVersionKind{agentsv1alpha1.GroupVersion.WithKind("Hook"), agentsv1alpha1.GroupVersion.WithKind("Worker")},
		Log:   funcr.New(func(prefix, args string) { logged.WriteString(args + "\n") }, funcr.Options{}),
	}
	// A hook applied by hand, not from the directory, is never pruned.
	hand := &agentsv1alpha1.Hook{}
	hand.Namespace, hand.Name, hand.Spec.Goal, hand.Spec.Steps = "default", "by-hand", "x", []agentsv1alpha1.Step{{Name: "one"}}
	if err := store.Client().Create(context.Background(), hand); err != nil {
		t.Fatal(err)
	}

	for _, step := range []struct {
		name  string
		files map[string]string // content to write; "" removes the file
		goals map[string]string // hook name -> goal; "" means absent
		log   string
	}{
		{"two files", map[string]string{"a.yaml": hookDoc("a1", "g") + "---\n" + hookDoc("a2", "g"), "b.yaml": hookDoc("b", "g")},
			map[string]string{"a1": "g", "a2": "g", "b": "g", "by-hand": "x"}, ""},
		{"a changed goal", map[string]string{"b.yaml": hookDoc("b", "new")},
			map[string]string{"a1": "g", "a2": "g", "b": "new"}, ""},
		{"an invalid file keeps its objects", map[string]string{"a.yaml": hookDoc("a1", "changed") + "---\n" + hookDoc("a2", "g") + "  bogus: 1\n"},
			map[string]string{"a1": "g", "a2": "g", "b": "new"}, "nothing from " + filepath.Join(dir, "a.yaml")},
		{"a removed document", map[string]string{"a.yaml": hookDoc("a1", "g")},
			map[string]string{"a1": "g", "a2": "", "b": "new"}, ""},
		{"a removed file", map[string]string{"a.yaml": ""},
			map[string]string{"a1": "", "a2": "", "b": "new", "by-hand": "x"}, ""},
	} {
		t.Run(step.name, func(t *testing.T) {
			for f, content := range step.files {
				path := filepath.Join(dir, f)
				if content == "" {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := syncer.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			for name, goal := range step.goals {
				h := &agentsv1alpha1.Hook{}
				err := store.Client().Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, h)
				switch {
				case goal == "" && !apierrors.IsNotFound(err):
					t.Errorf("%s: %v, want it deleted", name, err)
				case goal != "" && err != nil:
					t.Errorf("%s: %v", name, err)
				case goal != "" && h.Spec.Goal != goal:
					t.Errorf("%s: goal %q, want %q", name, h.Spec.Goal, goal)
				}
			}
			if !strings.Contains(logged.String(), step.log) {
				t.Errorf("log lacks %q:\n%s", step.log, logged.String())
			}
		})
	}
}
