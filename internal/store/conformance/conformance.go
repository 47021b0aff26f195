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

// Package conformance is one behavioural suite for the object store, run
// against both backends: tether's file store and a real kube-apiserver
// (envtest). Where the two differ, the file store has a bug.
package conformance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// Backend is a store under test.
type Backend struct {
	// Client talks to the store.
	Client client.WithWatch
	// NewNamespace returns a fresh, empty namespace for one test.
	NewNamespace func(t *testing.T) string
}

var counter atomic.Int64

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, counter.Add(1))
}

func newHook(ns, name string) *agentsv1alpha1.Hook {
	return &agentsv1alpha1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: agentsv1alpha1.HookSpec{
			Goal:  "make it work",
			Steps: []agentsv1alpha1.Step{{Name: "one", Validate: []agentsv1alpha1.ValidationCommand{{Command: []string{"true"}}}}},
		},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func rvOf(t *testing.T, obj client.Object) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not an integer", obj.GetResourceVersion())
	}
	return n
}

// causes returns the distinct "field:type" pairs of an API status error's
// causes, sorted. kube-apiserver repeats some causes; the set is what counts.
func causes(err error) []string {
	var out []string
	if se, ok := err.(apierrors.APIStatus); ok && se.Status().Details != nil {
		for _, c := range se.Status().Details.Causes {
			out = append(out, c.Field+":"+string(c.Type))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Run runs every conformance test against the backend.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend, ns string)
	}{
		{"CreateGetListDelete", testCRUD},
		{"CreateSetsSystemMetadataAndDropsStatus", testCreateMetadata},
		{"AlreadyExists", testAlreadyExists},
		{"Defaulting", testDefaulting},
		{"GenerationBumpsOnlyOnSpec", testGeneration},
		{"NoOpUpdateKeepsResourceVersion", testNoOpUpdate},
		{"StatusSubresource", testStatusSubresource},
		{"Conflicts", testConflicts},
		{"Finalizers", testFinalizers},
		{"LabelAndFieldSelectors", testSelectors},
		{"MergeAndJSONPatch", testPatch},
		{"DeleteAllOf", testDeleteAllOf},
		{"ValidationErrors", testValidation},
		{"StrictUnknownFields", testStrictUnknownFields},
		{"CheckpointImmutable", testCheckpointImmutable},
		{"WatchSequenceAndResume", testWatch},
		{"WatchLabelSelector", testWatchSelector},
		{"WatchSelectorsFromResourceVersion", testWatchSelectorFromRV},
		{"DryRun", testDryRun},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, b, b.NewNamespace(t))
		})
	}
}

func testCRUD(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "crud")
	must(t, b.Client.Create(ctx, h))
	got := &agentsv1alpha1.Hook{}
	must(t, b.Client.Get(ctx, client.ObjectKeyFromObject(h), got))
	if got.Spec.Goal != "make it work" || got.UID != h.UID || got.ResourceVersion != h.ResourceVersion {
		t.Fatalf("get returned %+v, created %+v", got.ObjectMeta, h.ObjectMeta)
	}
	if got.Kind != "" || got.APIVersion != "" {
		t.Errorf("typed get kept TypeMeta %v", got.TypeMeta)
	}
	list := &agentsv1alpha1.HookList{}
	must(t, b.Client.List(ctx, list, client.InNamespace(ns)))
	if len(list.Items) != 1 || list.Items[0].Name != "crud" {
		t.Fatalf("list = %v", list.Items)
	}
	if list.ResourceVersion == "" {
		t.Error("list has no resourceVersion")
	}
	must(t, b.Client.Delete(ctx, got))
	err := b.Client.Get(ctx, client.ObjectKeyFromObject(h), &agentsv1alpha1.Hook{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
	if err := b.Client.Delete(ctx, got); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v, want NotFound", err)
	}
}

func testCreateMetadata(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "meta")
	h.Status.State = agentsv1alpha1.HookCompleted
	must(t, b.Client.Create(ctx, h))
	if h.UID == "" || h.CreationTimestamp.IsZero() || h.Generation != 1 {
		t.Errorf("system metadata not set: uid %q created %v generation %d", h.UID, h.CreationTimestamp, h.Generation)
	}
	if h.Status.State != "" {
		t.Errorf("create kept status %q; the status subresource must drop it", h.Status.State)
	}
	gen := &agentsv1alpha1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "gen-"}, Spec: newHook(ns, "x").Spec}
	must(t, b.Client.Create(ctx, gen))
	if !strings.HasPrefix(gen.Name, "gen-") || len(gen.Name) != len("gen-")+5 {
		t.Errorf("generateName gave %q", gen.Name)
	}
}

func testAlreadyExists(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	must(t, b.Client.Create(ctx, newHook(ns, "twice")))
	if err := b.Client.Create(ctx, newHook(ns, "twice")); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}
}

func testDefaulting(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "defaults")
	must(t, b.Client.Create(ctx, h))
	if h.Spec.MaxAttempts != 3 {
		t.Errorf("maxAttempts %d, want 3", h.Spec.MaxAttempts)
	}
	// Left unset, these come from the tether configuration file, not the schema.
	if h.Spec.StaleAfter != nil || h.Spec.CheckpointInterval != nil || h.Spec.MaxCheckpoints != 0 {
		t.Errorf("staleAfter %v, checkpointInterval %v, maxCheckpoints %d: want them left unset", h.Spec.StaleAfter, h.Spec.CheckpointInterval, h.Spec.MaxCheckpoints)
	}
	if to := h.Spec.Steps[0].Validate[0].Timeout; to == nil || to.Duration != 10*time.Minute {
		t.Errorf("validate timeout = %v, want 10m", to)
	}
	w := &agentsv1alpha1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: agentsv1alpha1.WorkerSpec{Command: []string{"sleep", "1"}}}
	must(t, b.Client.Create(ctx, w))
	if w.Spec.Restart.MaxCrashes != 3 || w.Spec.Restart.Window == nil || w.Spec.Restart.Window.Duration != 10*time.Minute ||
		w.Spec.ClearAssigneeOnCrash == nil || !*w.Spec.ClearAssigneeOnCrash || w.Spec.Restart.Auto {
		t.Errorf("worker defaults: %+v", w.Spec)
	}
}

func testGeneration(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "gen")
	must(t, b.Client.Create(ctx, h))
	rv1 := rvOf(t, h)
	h.Labels = map[string]string{"a": "b"}
	must(t, b.Client.Update(ctx, h))
	if h.Generation != 1 {
		t.Errorf("a label change bumped generation to %d", h.Generation)
	}
	rv2 := rvOf(t, h)
	if rv2 <= rv1 {
		t.Errorf("resourceVersion went from %d to %d", rv1, rv2)
	}
	h.Spec.Goal = "another goal"
	must(t, b.Client.Update(ctx, h))
	if h.Generation != 2 {
		t.Errorf("a spec change gave generation %d, want 2", h.Generation)
	}
	h.Status.State = agentsv1alpha1.HookStepPending
	must(t, b.Client.Status().Update(ctx, h))
	if h.Generation != 2 {
		t.Errorf("a status change gave generation %d, want 2", h.Generation)
	}
}

func testNoOpUpdate(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "noop")
	must(t, b.Client.Create(ctx, h))
	rv := h.ResourceVersion
	must(t, b.Client.Update(ctx, h))
	if h.ResourceVersion != rv {
		t.Errorf("a no-op update changed resourceVersion %s to %s", rv, h.ResourceVersion)
	}
}

func testStatusSubresource(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "status")
	must(t, b.Client.Create(ctx, h))

	h.Status.State = agentsv1alpha1.HookStepRunning
	h.Spec.Goal = "changed with status"
	must(t, b.Client.Status().Update(ctx, h))
	got := &agentsv1alpha1.Hook{}
	must(t, b.Client.Get(ctx, client.ObjectKeyFromObject(h), got))
	if got.Status.State != agentsv1alpha1.HookStepRunning {
		t.Errorf("status update did not store status: %q", got.Status.State)
	}
	if got.Spec.Goal != "make it work" {
		t.Errorf("status update changed spec.goal to %q", got.Spec.Goal)
	}

	got.Status.State = agentsv1alpha1.HookFailed
	got.Spec.Goal = "changed with update"
	must(t, b.Client.Update(ctx, got))
	again := &agentsv1alpha1.Hook{}
	must(t, b.Client.Get(ctx, client.ObjectKeyFromObject(h), again))
	if again.Status.State != agentsv1alpha1.HookStepRunning {
		t.Errorf("main update changed status to %q", again.Status.State)
	}
	if again.Spec.Goal != "changed with update" {
		t.Errorf("main update did not store spec.goal: %q", again.Spec.Goal)
	}
}

func testConflicts(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "conflict")
	must(t, b.Client.Create(ctx, h))
	stale := h.DeepCopy()
	h.Spec.Goal = "first"
	must(t, b.Client.Update(ctx, h))
	stale.Spec.Goal = "second"
	if err := b.Client.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	stale.Status.State = agentsv1alpha1.HookFailed
	if err := b.Client.Status().Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("stale status update: %v, want Conflict", err)
	}
	noRV := h.DeepCopy()
	noRV.ResourceVersion = ""
	noRV.Spec.Goal = "third"
	err := b.Client.Update(ctx, noRV)
	if !apierrors.IsInvalid(err) || !slices.Equal(causes(err), []string{"metadata.resourceVersion:FieldValueInvalid"}) {
		t.Fatalf("update without resourceVersion: %v %v, want Invalid metadata.resourceVersion", err, causes(err))
	}
	if !strings.Contains(err.Error(), `hooks.agents.tether.dev "conflict" is invalid`) {
		t.Errorf("update without resourceVersion: message %q does not name the resource", err)
	}
	otherUID := h.DeepCopy()
	otherUID.UID = "not-the-uid"
	if err := b.Client.Update(ctx, otherUID); !apierrors.IsConflict(err) {
		t.Fatalf("update with another uid: %v, want Conflict", err)
	}
	pre := client.Preconditions{UID: ptr(types.UID("not-the-uid"))}
	if err := b.Client.Delete(ctx, h, pre); !apierrors.IsConflict(err) {
		t.Fatalf("delete with a wrong uid precondition: %v, want Conflict", err)
	}
}

func ptr[T any](v T) *T { return &v }

func testFinalizers(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "fin")
	h.Finalizers = []string{"agents.tether.dev/test"}
	must(t, b.Client.Create(ctx, h))
	must(t, b.Client.Delete(ctx, h))
	got := &agentsv1alpha1.Hook{}
	must(t, b.Client.Get(ctx, client.ObjectKeyFromObject(h), got))
	if got.DeletionTimestamp == nil {
		t.Fatal("delete of an object with finalizers did not set deletionTimestamp")
	}
	if got.Generation != 2 {
		t.Errorf("deletionTimestamp gave generation %d, want 2", got.Generation)
	}
	more := got.DeepCopy()
	more.Finalizers = append(more.Finalizers, "agents.tether.dev/late")
	err := b.Client.Update(ctx, more)
	if !apierrors.IsInvalid(err) || !slices.Equal(causes(err), []string{"metadata.finalizers:FieldValueForbidden"}) {
		t.Fatalf("adding a finalizer while deleting: %v %v, want Invalid metadata.finalizers Forbidden", err, causes(err))
	}
	got.Finalizers = nil
	must(t, b.Client.Update(ctx, got))
	if err := b.Client.Get(ctx, client.ObjectKeyFromObject(h), &agentsv1alpha1.Hook{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after removing the last finalizer: %v, want NotFound", err)
	}
}

func testSelectors(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	for i, team := range []string{"a", "a", "b"} {
		h := newHook(ns, fmt.Sprintf("sel-%d", i))
		h.Labels = map[string]string{"team": team}
		must(t, b.Client.Create(ctx, h))
	}
	names := func(opts ...client.ListOption) []string {
		list := &agentsv1alpha1.HookList{}
		must(t, b.Client.List(ctx, list, append(opts, client.InNamespace(ns))...))
		var out []string
		for _, h := range list.Items {
			out = append(out, h.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(client.MatchingLabels{"team": "a"}); !slices.Equal(got, []string{"sel-0", "sel-1"}) {
		t.Errorf("team=a: %v", got)
	}
	if got := names(client.HasLabels{"team"}); len(got) != 3 {
		t.Errorf("has team: %v", got)
	}
	if got := names(client.MatchingFields{"metadata.name": "sel-2"}); !slices.Equal(got, []string{"sel-2"}) {
		t.Errorf("metadata.name=sel-2: %v", got)
	}
	sel := client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("metadata.name", "sel-2")}
	if got := names(sel); !slices.Equal(got, []string{"sel-0", "sel-1"}) {
		t.Errorf("metadata.name!=sel-2: %v", got)
	}
}

func testPatch(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	h := newHook(ns, "patch")
	must(t, b.Client.Create(ctx, h))
	base := h.DeepCopy()
	h.Spec.Goal = "merged"
	must(t, b.Client.Patch(ctx, h, client.MergeFrom(base)))
	if h.Spec.Goal != "merged" || h.Generation != 2 {
		t.Errorf("merge patch: goal %q generation %d", h.Spec.Goal, h.Generation)
	}
	jp := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/goal","value":"json-patched"}]`))
	must(t, b.Client.Patch(ctx, h, jp))
	if h.Spec.Goal != "json-patched" {
		t.Errorf("json patch: goal %q", h.Spec.Goal)
	}
	stale := base.DeepCopy()
	stale.Spec.Goal = "stale"
	if err := b.Client.Patch(ctx, stale, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); !apierrors.IsConflict(err) {
		t.Fatalf("optimistic-lock patch on a stale base: %v, want Conflict", err)
	}
	st := h.DeepCopy()
	st.Status.State = agentsv1alpha1.HookAwaitingHuman
	must(t, b.Client.Status().Patch(ctx, st, client.MergeFrom(h)))
	if st.Status.State != agentsv1alpha1.HookAwaitingHuman {
		t.Errorf("status patch: %q", st.Status.State)
	}
}

func testDeleteAllOf(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	for i, team := range []string{"x", "x", "y"} {
		h := newHook(ns, fmt.Sprintf("dao-%d", i))
		h.Labels = map[string]string{"team": team}
		must(t, b.Client.Create(ctx, h))
	}
	must(t, b.Client.DeleteAllOf(ctx, &agentsv1alpha1.Hook{}, client.InNamespace(ns), client.MatchingLabels{"team": "x"}))
	list := &agentsv1alpha1.HookList{}
	must(t, b.Client.List(ctx, list, client.InNamespace(ns)))
	if len(list.Items) != 1 || list.Items[0].Name != "dao-2" {
		t.Fatalf("after DeleteAllOf team=x: %v", list.Items)
	}
}

func testValidation(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	tests := []struct {
		name   string
		mutate func(h *agentsv1alpha1.Hook)
		want   []string
	}{
		{"bad step name", func(h *agentsv1alpha1.Hook) { h.Spec.Steps[0].Name = "Bad_Name" }, []string{"spec.steps[0].name:FieldValueInvalid"}},
		{"maxAttempts below minimum", func(h *agentsv1alpha1.Hook) { h.Spec.MaxAttempts = -1 }, []string{"spec.maxAttempts:FieldValueInvalid"}},
		{"missing goal", func(h *agentsv1alpha1.Hook) { h.Spec.Goal = "" }, []string{"spec.goal:FieldValueInvalid"}},
		{"empty command", func(h *agentsv1alpha1.Hook) { h.Spec.Steps[0].Validate[0].Command = []string{} }, []string{"spec.steps[0].validate[0].command:FieldValueInvalid"}},
		{"duplicate step names", func(h *agentsv1alpha1.Hook) { h.Spec.Steps = append(h.Spec.Steps, h.Spec.Steps[0]) }, []string{"spec:FieldValueInvalid"}},
		{"bad name", func(h *agentsv1alpha1.Hook) { h.Name = "Bad_Name" }, []string{"metadata.name:FieldValueInvalid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHook(ns, uniqueName("invalid"))
			tt.mutate(h)
			err := b.Client.Create(ctx, h)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: %v, want Invalid", err)
			}
			if got := causes(err); !slices.Equal(got, tt.want) {
				t.Fatalf("causes %v, want %v (%v)", got, tt.want, err)
			}
		})
	}
	t.Run("bad enum in status", func(t *testing.T) {
		h := newHook(ns, uniqueName("enum"))
		must(t, b.Client.Create(ctx, h))
		h.Status.State = "bogus"
		err := b.Client.Status().Update(ctx, h)
		// CEL rules are skipped when the schema already failed, and the API server says so.
		want := []string{"<nil>:FieldValueInvalid", "status.state:FieldValueNotSupported"}
		if !apierrors.IsInvalid(err) || !slices.Equal(causes(err), want) {
			t.Fatalf("status.state bogus: %v %v", err, causes(err))
		}
	})
	t.Run("unknown field in status", func(t *testing.T) {
		h := newHook(ns, uniqueName("prune"))
		must(t, b.Client.Create(ctx, h))
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(agentsv1alpha1.GroupVersion.WithKind("Hook"))
		must(t, b.Client.Get(ctx, client.ObjectKeyFromObject(h), u))
		must(t, unstructured.SetNestedField(u.Object, "step_pending", "status", "state"))
		must(t, unstructured.SetNestedField(u.Object, "kept nowhere", "status", "notAField"))
		must(t, b.Client.Status().Update(ctx, u))
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "notAField"); found {
			t.Errorf("the status update returned the unknown field")
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		must(t, b.Client.Get(ctx, client.ObjectKeyFromObject(h), got))
		if state, _, _ := unstructured.NestedString(got.Object, "status", "state"); state != "step_pending" {
			t.Errorf("status.state = %q, want step_pending", state)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "status", "notAField"); found {
			t.Errorf("the unknown status field was stored")
		}
	})
}

func testStrictUnknownFields(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "agents.tether.dev/v1alpha1",
		"kind":       "Hook",
		"metadata":   map[string]interface{}{"name": "strict", "namespace": ns},
		"spec": map[string]interface{}{
			"goal":    "g",
			"retries": int64(3),
			"steps":   []interface{}{map[string]interface{}{"name": "one"}},
		},
	}}
	err := b.Client.Create(ctx, u.DeepCopy(), client.FieldValidation(metav1.FieldValidationStrict))
	want := `Hook in version "v1alpha1" cannot be handled as a Hook: strict decoding error: unknown field "spec.retries"`
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("strict create with an unknown field: %v, want BadRequest naming spec.retries", err)
	}
	if err := b.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "strict"}, &agentsv1alpha1.Hook{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a rejected create stored the object: %v", err)
	}
	lax := u.DeepCopy()
	must(t, b.Client.Create(ctx, lax))
	if _, found, _ := unstructured.NestedFieldNoCopy(lax.Object, "spec", "retries"); found {
		t.Error("a non-strict create kept the unknown field instead of pruning it")
	}
}

func testCheckpointImmutable(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	cp := &agentsv1alpha1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp"},
		Spec:       agentsv1alpha1.CheckpointSpec{HookName: "h", Trigger: agentsv1alpha1.TriggerManual, Description: "first"},
	}
	must(t, b.Client.Create(ctx, cp))
	cp.Labels = map[string]string{"kept": "yes"}
	must(t, b.Client.Update(ctx, cp))
	cp.Spec.Description = "rewritten"
	err := b.Client.Update(ctx, cp)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec is immutable") {
		t.Fatalf("changing a checkpoint's spec: %v, want Invalid: spec is immutable", err)
	}
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) client.Object {
	t.Helper()
	ev := nextEvent(t, w)
	obj, ok := ev.Object.(client.Object)
	if ev.Type != typ || !ok || obj.GetName() != name {
		t.Fatalf("event %s %v, want %s %s", ev.Type, ev.Object, typ, name)
	}
	return obj
}

func testWatch(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	list := &agentsv1alpha1.HookList{}
	must(t, b.Client.List(ctx, list, client.InNamespace(ns)))
	w, err := b.Client.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	must(t, err)
	defer w.Stop()

	h := newHook(ns, "watched")
	must(t, b.Client.Create(ctx, h))
	created := h.ResourceVersion
	h.Spec.Goal = "changed"
	must(t, b.Client.Update(ctx, h))
	must(t, b.Client.Delete(ctx, h))

	added := expectEvent(t, w, watch.Added, "watched")
	modified := expectEvent(t, w, watch.Modified, "watched")
	deleted := expectEvent(t, w, watch.Deleted, "watched")
	if rvOf(t, added) >= rvOf(t, modified) || rvOf(t, modified) >= rvOf(t, deleted) {
		t.Errorf("resourceVersions not increasing: %s %s %s", added.GetResourceVersion(), modified.GetResourceVersion(), deleted.GetResourceVersion())
	}
	if _, ok := added.(*agentsv1alpha1.Hook); !ok {
		t.Errorf("typed watch delivered %T", added)
	}

	resumed, err := b.Client.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: created}})
	must(t, err)
	defer resumed.Stop()
	expectEvent(t, resumed, watch.Modified, "watched")
	expectEvent(t, resumed, watch.Deleted, "watched")

	fresh, err := b.Client.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns))
	must(t, err)
	defer fresh.Stop()
	other := newHook(ns, "after")
	must(t, b.Client.Create(ctx, other))
	expectEvent(t, fresh, watch.Added, "after")
}

func testWatchSelector(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	w, err := b.Client.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns), client.MatchingLabels{"pick": "me"})
	must(t, err)
	defer w.Stop()
	h := newHook(ns, "sel")
	must(t, b.Client.Create(ctx, h))
	h.Labels = map[string]string{"pick": "me"}
	must(t, b.Client.Update(ctx, h))
	expectEvent(t, w, watch.Added, "sel")
	h.Labels = nil
	must(t, b.Client.Update(ctx, h))
	expectEvent(t, w, watch.Deleted, "sel")
}

// testWatchSelectorFromRV checks that a selective watch started from a
// list's resourceVersion, as kubectl get -w starts one, labels a change of an
// object that matched at that resourceVersion MODIFIED, and a change that
// makes it stop matching DELETED, as kube-apiserver does.
func testWatchSelectorFromRV(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	picked := newHook(ns, "picked")
	picked.Labels = map[string]string{"pick": "me"}
	must(t, b.Client.Create(ctx, picked))
	list := &agentsv1alpha1.HookList{}
	must(t, b.Client.List(ctx, list, client.InNamespace(ns)))
	from := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}}

	byName, err := b.Client.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns),
		client.MatchingFields{"metadata.name": "picked"}, from)
	must(t, err)
	defer byName.Stop()
	byLabel, err := b.Client.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns),
		client.MatchingLabels{"pick": "me"}, from)
	must(t, err)
	defer byLabel.Stop()

	picked.Spec.Goal = "changed"
	must(t, b.Client.Update(ctx, picked))
	picked.Labels = nil
	must(t, b.Client.Update(ctx, picked))

	expectEvent(t, byName, watch.Modified, "picked")
	expectEvent(t, byName, watch.Modified, "picked")
	expectEvent(t, byLabel, watch.Modified, "picked")
	expectEvent(t, byLabel, watch.Deleted, "picked")
}

// testDryRun checks that every write with DryRunAll validates, defaults and
// reports what it would do, and stores nothing.
func testDryRun(t *testing.T, b Backend, ns string) {
	ctx := context.Background()
	dry := client.DryRunAll
	exists := func(name string) bool {
		t.Helper()
		err := b.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &agentsv1alpha1.Hook{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	h := newHook(ns, "dry")
	must(t, b.Client.Create(ctx, h, dry))
	if exists("dry") {
		t.Fatal("dry-run create stored the object")
	}
	if h.Spec.MaxAttempts != 3 || h.UID == "" || h.CreationTimestamp.IsZero() {
		t.Errorf("dry-run create did not return the defaulted object: maxAttempts %d uid %q created %v", h.Spec.MaxAttempts, h.UID, h.CreationTimestamp)
	}

	bad := newHook(ns, "dry-bad")
	bad.Spec.MaxAttempts = -1
	if err := b.Client.Create(ctx, bad, dry); !apierrors.IsInvalid(err) || !slices.Contains(causes(err), "spec.maxAttempts:FieldValueInvalid") {
		t.Errorf("dry-run create of an invalid object: %v (causes %v), want Invalid on spec.maxAttempts", err, causes(err))
	}

	real := newHook(ns, "dry-real")
	must(t, b.Client.Create(ctx, real))
	if err := b.Client.Create(ctx, newHook(ns, "dry-real"), dry); !apierrors.IsAlreadyExists(err) {
		t.Errorf("dry-run create of an existing name: %v, want AlreadyExists", err)
	}

	upd := real.DeepCopy()
	upd.Spec.Goal = "dry update"
	must(t, b.Client.Update(ctx, upd, dry))
	if upd.Spec.Goal != "dry update" || upd.Generation != real.Generation+1 {
		t.Errorf("dry-run update returned goal %q generation %d, want the updated object at generation %d", upd.Spec.Goal, upd.Generation, real.Generation+1)
	}
	pat := real.DeepCopy()
	pat.Spec.Goal = "dry patch"
	must(t, b.Client.Patch(ctx, pat, client.MergeFrom(real), dry))
	if pat.Spec.Goal != "dry patch" {
		t.Errorf("dry-run patch returned goal %q", pat.Spec.Goal)
	}
	must(t, b.Client.Delete(ctx, real.DeepCopy(), dry))

	got := &agentsv1alpha1.Hook{}
	must(t, b.Client.Get(ctx, client.ObjectKeyFromObject(real), got))
	if got.Spec.Goal != real.Spec.Goal || got.ResourceVersion != real.ResourceVersion || got.DeletionTimestamp != nil {
		t.Errorf("dry-run update, patch and delete changed the stored object: goal %q rv %s->%s deleting %v",
			got.Spec.Goal, real.ResourceVersion, got.ResourceVersion, got.DeletionTimestamp)
	}
	if err := b.Client.Delete(ctx, newHook(ns, "dry-missing"), dry); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run delete of a missing object: %v, want NotFound", err)
	}
}
