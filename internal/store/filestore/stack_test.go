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

package filestore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// stackHelper is the helper mode (helperEnv) that runs one operation of
// stackOperations, named by stackOperationEnv, with its stack bounded.
const (
	stackHelper       = "within-stack"
	stackOperationEnv = "TETHER_STACK_OPERATION"
)

// writerStack bounds the stack of every goroutine of a store's caller
// while it reads and writes: `tether run` makes its writes on its
// reconcilers' goroutines, which keep the stack the deepest write grew
// them to until collections halve it again. A realistic Hook's writes
// need under 16 KiB.
const writerStack = 32 << 10

// createWithStatus creates h and stores its status, as it was given.
func createWithStatus(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
	status := h.Status
	if err := c.Create(ctx, h); err != nil {
		return err
	}
	h.Status = status
	return c.Status().Update(ctx, h)
}

// stackOperations are a store's reads and writes of a realistic Hook
// (testdata/hooks/running.yaml), each after the last, on one store.
var stackOperations = []struct {
	name string
	run  func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error
}{
	{"create", createWithStatus},
	{"get", func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
		return c.Get(ctx, client.ObjectKeyFromObject(h), h)
	}},
	{"list", func(ctx context.Context, c client.Client, _ *agentsv1alpha1.Hook) error {
		return c.List(ctx, &agentsv1alpha1.HookList{})
	}},
	{"update", func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
		h.Spec.Goal += " Then the docs."
		return c.Update(ctx, h)
	}},
	{"status update", func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
		h.Status.Conditions = append(h.Status.Conditions, metav1.Condition{Type: "Probed", Status: metav1.ConditionTrue,
			Reason: "Probed", Message: "within a bounded stack", LastTransitionTime: metav1.Now(), ObservedGeneration: h.Generation})
		return c.Status().Update(ctx, h)
	}},
	{"merge patch", func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
		return c.Patch(ctx, h, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`)))
	}},
	{"JSON patch", func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
		return c.Patch(ctx, h, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/goal","value":"Paginate."}]`)))
	}},
	{"status writes side by side", func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
		// Eight Hooks written at once: group commits, whose leader reads
		// back the journal's newest groups (recentDirs).
		errs := make(chan error, 8)
		for i := range 8 {
			go func() {
				o := h.DeepCopy()
				o.ResourceVersion, o.UID, o.Name = "", "", fmt.Sprintf("%s-%d", h.Name, i)
				errs <- createWithStatus(ctx, c, o)
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				return err
			}
		}
		return nil
	}},
	{"delete", func(ctx context.Context, c client.Client, h *agentsv1alpha1.Hook) error {
		return c.Delete(ctx, h)
	}},
}

// runWithinStack runs the stackOperations up to the one named by
// stackOperationEnv, that one with every goroutine's stack bounded to
// writerStack: one that needs more crashes the process, with its stack.
func runWithinStack() int {
	c, done := openForHelper()
	defer done()
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "hooks", "running.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	h := &agentsv1alpha1.Hook{}
	if err := yaml.UnmarshalStrict(data, h); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	// A kind's schema and CEL rules compile on its first write, once per
	// process (ANTLR's parser recurses deeply): not a write's own depth.
	warm := h.DeepCopy()
	warm.Name += "-warm"
	if err := createWithStatus(ctx, c, warm); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	want := os.Getenv(stackOperationEnv)
	for _, op := range stackOperations {
		bounded := op.name == want
		if bounded {
			debug.SetMaxStack(writerStack)
		}
		if err := op.run(ctx, c, h); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", op.name, err)
			return 1
		}
		if bounded {
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "no operation", want)
	return 3
}

// TestStoreCallsFitWithinASmallStack runs each of a store's reads and
// writes of a realistic Hook in a process whose goroutines may not grow
// their stacks past writerStack. A function with a large frame on the
// write path (a 64 KiB read buffer on the stack once grew every group
// commit leader's stack to 128 KiB) fails it.
func TestStoreCallsFitWithinASmallStack(t *testing.T) {
	for _, op := range stackOperations {
		t.Run(op.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+stackHelper, stackOperationEnv+"="+op.name, "TETHER_STORE="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				trace := string(out)
				if i := strings.Index(trace, "\ngoroutine "); i >= 0 {
					// The goroutine that overflowed, not every other one.
					if j := strings.Index(trace[i+1:], "\n\n"); j >= 0 {
						trace = trace[:i+1+j]
					}
				}
				t.Fatalf("%s within a %d KiB stack: %v\n%s", op.name, writerStack>>10, err, trace)
			}
		})
	}
}
