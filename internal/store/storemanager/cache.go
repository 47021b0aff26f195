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

package storemanager

import (
	"context"
	"fmt"
	"slices"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// trimmedMarker is the managedFields of every trimmed cached object. All
// of them share this one array, so the marker costs no memory per object;
// the cache's deep copies carry it to whoever reads them.
var trimmedMarker = []metav1.ManagedFieldsEntry{{Manager: "tether-cache-trimmed"}}

// IsTrimmed reports whether obj is the cache's trimmed copy of an object
// (see CacheTransform): fields no cached reader needs were dropped from
// it, so writing it whole would drop them from the stored object too.
func IsTrimmed(obj client.Object) bool {
	mf := obj.GetManagedFields()
	return len(mf) == 1 && mf[0].Manager == trimmedMarker[0].Manager
}

// CacheTransform is the cache transform of both backends' Managers, on
// the store and on a cluster. It drops each object's managedFields, which
// no reconciler reads and which an Update without them leaves in place,
// and shares the strings that repeat across objects (namespaces, states,
// reasons, paths, commits) instead of holding a copy in each.
//
// Checkpoints, five or more per Hook, are cached trimmed to what the
// reconcilers and the recovery file read of them (see trimCheckpoint); the
// trimmed copy is marked (IsTrimmed), and the Managers' clients refuse to
// Create or Update a marked object (GuardTrimmed): a reconciler writes a
// cached Checkpoint with a patch of what it changed.
//
// The last-applied-configuration annotation of Hooks and Workers stays
// cached: reconcilers Update those from the cache, and an Update without
// the annotation would delete it from the stored object, leaving the next
// `tether apply` no three-way merge base.
func CacheTransform() toolscache.TransformFunc {
	return func(in any) (any, error) {
		obj, ok := in.(client.Object)
		if !ok {
			return in, nil
		}
		obj.SetManagedFields(nil)
		switch o := obj.(type) {
		case *v1.Checkpoint:
			trimCheckpoint(o)
		case *v1.Hook:
			internHook(o)
		case *v1.Worker:
			internWorker(o)
		}
		return obj, nil
	}
}

// trimCheckpoint drops what no cached reader of a Checkpoint reads and
// marks it trimmed. It keeps, by reader:
//
//   - the Checkpoint reconciler: finalizers, deletionTimestamp, uid,
//     generation, creationTimestamp, spec.hookName, spec.seq,
//     spec.workspace, spec.git.snapshotRef and snapshotCommit, status;
//   - the Hook reconciler's recovery file (recoveryfile.Summarize): name,
//     creationTimestamp, spec.trigger, step, description, git.branch,
//     commit, dirty and snapshotCommit;
//   - the Hook controller's owner watch: ownerReferences; the metrics of
//     a new Checkpoint: spec.trigger and the capture-duration annotation.
//
// It drops labels, every other annotation, spec.files, filesTruncated,
// skippedFiles, degraded, git.snapshotShort and git.snapshotTree.
func trimCheckpoint(cp *v1.Checkpoint) {
	cp.ManagedFields = trimmedMarker
	cp.Labels = nil
	if d, ok := cp.Annotations[v1.CaptureDurationAnnotation]; !ok {
		cp.Annotations = nil
	} else if len(cp.Annotations) > 1 {
		cp.Annotations = map[string]string{v1.CaptureDurationAnnotation: d}
	}
	internMeta(&cp.ObjectMeta)
	for i := range cp.OwnerReferences {
		// A Hook's Checkpoints name it alike.
		r := &cp.OwnerReferences[i]
		r.Name, r.UID = intern(r.Name), types.UID(intern(string(r.UID)))
	}
	s := &cp.Spec
	s.Files, s.FilesTruncated, s.SkippedFiles, s.Degraded = nil, false, nil, nil
	s.HookName = intern(s.HookName)
	s.Trigger = v1.CheckpointTrigger(intern(string(s.Trigger)))
	s.Step = intern(s.Step)
	s.State = v1.HookState(intern(string(s.State)))
	s.Workspace = intern(s.Workspace)
	if g := s.Git; g != nil {
		// The tree stays: the Hook reconciler records it in
		// status.lastCheckpoint, where the Stop loop reads progress from it.
		g.SnapshotShort = ""
		g.Branch, g.Commit, g.SnapshotCommit = intern(g.Branch), intern(g.Commit), intern(g.SnapshotCommit)
	}
	internConditions(cp.Status.Conditions)
}

// internHook shares a cached Hook's repeating strings; it drops nothing.
func internHook(h *v1.Hook) {
	internMeta(&h.ObjectMeta)
	s := &h.Spec
	s.Workspace, s.Assignee = intern(s.Workspace), intern(s.Assignee)
	s.Steps = exact(s.Steps)
	for i := range s.Steps {
		st := &s.Steps[i]
		st.Name = intern(st.Name)
		for j := range st.Validate {
			internAll(st.Validate[j].Command)
		}
	}
	st := &h.Status
	st.State = v1.HookState(intern(string(st.State)))
	st.Steps, st.Conditions = exact(st.Steps), exact(st.Conditions)
	if c := st.CurrentStep; c != nil {
		c.Name = intern(c.Name)
	}
	for i := range st.Steps {
		r := &st.Steps[i]
		r.Name, r.Phase = intern(r.Name), v1.StepPhase(intern(string(r.Phase)))
		for j := range r.Receipts {
			internAll(r.Receipts[j].Command)
		}
	}
	// A decoded slice grows by doubling: a history of 5 entries holds 8.
	st.History = exact(st.History)
	for i := range st.History {
		e := &st.History[i]
		e.Event, e.Actor = intern(e.Event), intern(e.Actor)
		e.From, e.To = v1.HookState(intern(string(e.From))), v1.HookState(intern(string(e.To)))
	}
	if lc := st.LastCheckpoint; lc != nil {
		lc.Trigger, lc.Step = v1.CheckpointTrigger(intern(string(lc.Trigger))), intern(lc.Step)
	}
	internConditions(st.Conditions)
}

// internWorker shares a cached Worker's repeating strings; it drops nothing.
func internWorker(w *v1.Worker) {
	internMeta(&w.ObjectMeta)
	w.Spec.Workdir = intern(w.Spec.Workdir)
	internAll(w.Spec.Command)
	st := &w.Status
	st.Phase = v1.WorkerPhase(intern(string(st.Phase)))
	st.BootID, st.Host = intern(st.BootID), intern(st.Host)
	internConditions(st.Conditions)
}

// exact returns s in an array of its length, when it has spare capacity.
func exact[S ~[]E, E any](s S) S {
	if cap(s) == len(s) {
		return s
	}
	return slices.Clone(s)
}

func internMeta(m *metav1.ObjectMeta) {
	m.Namespace = intern(m.Namespace)
	internAll(m.Finalizers)
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		r.APIVersion, r.Kind = intern(r.APIVersion), intern(r.Kind)
		r.Controller, r.BlockOwnerDeletion = sharedBool(r.Controller), sharedBool(r.BlockOwnerDeletion)
	}
}

func internConditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		c.Type, c.Reason = intern(c.Type), intern(c.Reason)
		c.Status = metav1.ConditionStatus(intern(string(c.Status)))
	}
}

func internAll(ss []string) {
	for i := range ss {
		ss[i] = intern(ss[i])
	}
}

var sharedTrue, sharedFalse = true, false

// sharedBool returns a pointer to a bool equal to *b that all cached
// objects share (nobody writes through a cached object: the cache hands
// out deep copies).
func sharedBool(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	default:
		return &sharedFalse
	}
}

// intern returns the canonical copy of s: equal strings of many cached
// objects then share one backing array.
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

// GuardTrimmed wraps c so that it refuses to Create or Update, through
// itself or a subresource, an object the cache trimmed (IsTrimmed):
// writing one whole would store it without what the cache dropped. A
// patch carries only what the caller changed, and passes.
func GuardTrimmed(c client.Client) client.Client { return &guardedClient{Client: c} }

type guardedClient struct{ client.Client }

func refuseTrimmed(verb string, obj client.Object) error {
	if !IsTrimmed(obj) {
		return nil
	}
	return fmt.Errorf("refusing to %s %T %s/%s: it is the cache's trimmed copy; patch what changed, or read the object whole through the API reader",
		verb, obj, obj.GetNamespace(), obj.GetName())
}

func (g *guardedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := refuseTrimmed("create", obj); err != nil {
		return err
	}
	return g.Client.Create(ctx, obj, opts...)
}

func (g *guardedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := refuseTrimmed("update", obj); err != nil {
		return err
	}
	return g.Client.Update(ctx, obj, opts...)
}

func (g *guardedClient) Status() client.SubResourceWriter { return g.SubResource("status") }

func (g *guardedClient) SubResource(sub string) client.SubResourceClient {
	return &guardedSubResource{SubResourceClient: g.Client.SubResource(sub), sub: sub}
}

type guardedSubResource struct {
	client.SubResourceClient
	sub string
}

func (g *guardedSubResource) Create(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	if err := refuseTrimmed("create the "+g.sub+" of", obj); err != nil {
		return err
	}
	return g.SubResourceClient.Create(ctx, obj, subResource, opts...)
}

func (g *guardedSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := refuseTrimmed("update the "+g.sub+" of", obj); err != nil {
		return err
	}
	return g.SubResourceClient.Update(ctx, obj, opts...)
}

// NewGuardedClient is controller-runtime's client.New wrapped by
// GuardTrimmed: the NewClient of `tether run --cluster`'s Manager, whose
// cache holds the same trimmed objects as the store's.
func NewGuardedClient(config *rest.Config, o client.Options) (client.Client, error) {
	c, err := client.New(config, o)
	if err != nil {
		return nil, err
	}
	return GuardTrimmed(c), nil
}
