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

package crd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/kubectl/manifest"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// TestSamplesOnAPIServer installs the CRDs into a real kube-apiserver and
// creates every sample through it, so the samples, defaults and CEL rules are
// proven against the reference implementation.
func TestSamplesOnAPIServer(t *testing.T) {
	c := testenv.Start(t).Client
	scheme := c.Scheme()
	ctx := context.Background()

	files, err := filepath.Glob("../samples/agents_*.yaml")
	if err != nil || len(files) != 4 {
		t.Fatalf("samples: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := manifest.Decode(f, data, scheme)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			d.Object.SetNamespace("default")
			if err := c.Create(ctx, d.Object); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	}

	hook := &agentsv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hook-sample"}, hook); err != nil {
		t.Fatal(err)
	}
	if hook.Spec.MaxAttempts != 3 || hook.Spec.Steps[0].Validate[0].Timeout == nil {
		t.Errorf("defaults not applied: %+v", hook.Spec)
	}

	cp := &agentsv1alpha1.Checkpoint{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hook-sample-1"}, cp); err != nil {
		t.Fatal(err)
	}
	cp.Spec.Description = "rewritten history"
	err = c.Update(ctx, cp)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec is immutable") {
		t.Errorf("updating a checkpoint's spec: got %v, want Invalid: spec is immutable", err)
	}

	dup := hook.DeepCopy()
	dup.ResourceVersion = ""
	dup.Name = "dup-steps"
	dup.Spec.Steps = append(dup.Spec.Steps, dup.Spec.Steps[0])
	err = c.Create(ctx, dup)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "step names must be unique") {
		t.Errorf("duplicate step names: got %v, want Invalid", err)
	}

	w := &agentsv1alpha1.Worker{}
	w.Namespace, w.Name = "default", "both"
	w.Spec.Command = []string{"sleep", "1"}
	w.Spec.Adopt = &agentsv1alpha1.AdoptSpec{PID: 1}
	err = c.Create(ctx, w)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "mutually exclusive") {
		t.Errorf("command with adopt: got %v, want Invalid", err)
	}
}
