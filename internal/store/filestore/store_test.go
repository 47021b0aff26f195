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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/conformance"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/testing/testsupport"
)

// newStore opens a store on dir with the project's scheme and CRDs.
func newStore(dir string, mutate ...func(*filestore.Options)) (*filestore.Store, error) {
	return testsupport.OpenStore(dir, mutate...)
}

func openStore(t *testing.T, dir string, mutate ...func(*filestore.Options)) *filestore.Store {
	t.Helper()
	mutate = append([]func(*filestore.Options){func(o *filestore.Options) { o.Log = testr.New(t) }}, mutate...)
	s, err := newStore(dir, mutate...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	s := openStore(t, t.TempDir())
	n := 0
	conformance.Run(t, conformance.Backend{
		Client: s.Client(),
		NewNamespace: func(*testing.T) string {
			n++
			return fmt.Sprintf("ns-%d", n)
		},
	})
}

func hook(name string) *agentsv1alpha1.Hook {
	return &agentsv1alpha1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       agentsv1alpha1.HookSpec{Goal: "g", Steps: []agentsv1alpha1.Step{{Name: "one"}}},
	}
}

// storeFiles lists every file below dir except the lock and the journal.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() != ".lock" && d.Name() != "journal" && d.Name() != ".gitignore" {
			out = append(out, strings.TrimPrefix(path, dir+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLayoutAndPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s := openStore(t, dir)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("store directory mode %o, want 700", fi.Mode().Perm())
	}
	if err := s.Client().Create(context.Background(), hook("layout")); err != nil {
		t.Fatal(err)
	}
	files := storeFiles(t, dir)
	if len(files) != 1 || files[0] != "hooks/default/layout.yaml" {
		t.Fatalf("files %v, want [hooks/default/layout.yaml]", files)
	}
	data, err := os.ReadFile(filepath.Join(dir, files[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# Managed by tether (resourceVersion ") || !strings.Contains(string(data), "goal: g\n") {
		t.Errorf("file content:\n%s", data)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()

	big := hook("big")
	big.Spec.Steps[0].Description = strings.Repeat("x", 4096)
	for i := 0; i < 63; i++ {
		step := big.Spec.Steps[0]
		step.Name = fmt.Sprintf("s%d", i)
		step.Validate = []agentsv1alpha1.ValidationCommand{{Command: []string{strings.Repeat("y", 30000)}}}
		big.Spec.Steps = append(big.Spec.Steps, step)
	}

	tests := []struct {
		name  string
		obj   client.Object
		check func(error) bool
		want  string
	}{
		{"slash in name", hook("a/b"), apierrors.IsInvalid, "metadata.name"},
		{"dot-dot name", hook(".."), apierrors.IsInvalid, "metadata.name"},
		{"upper case name", hook("Upper"), apierrors.IsInvalid, "metadata.name"},
		{"traversal namespace", &agentsv1alpha1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "../etc", Name: "x"}, Spec: hook("x").Spec}, apierrors.IsInvalid, "metadata.namespace"},
		{"oversized object", big, apierrors.IsRequestEntityTooLargeError, "limit is"},
		{"wrong apiVersion", &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "agents.tether.dev/v9", "kind": "Hook", "metadata": map[string]interface{}{"name": "v9", "namespace": "default"},
		}}, func(err error) bool { return err != nil }, "agents.tether.dev"},
		{"unknown kind", &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "agents.tether.dev/v1alpha1", "kind": "Task", "metadata": map[string]interface{}{"name": "t", "namespace": "default"},
		}}, func(err error) bool { return err != nil }, "Task"},
		{"kind the store does not serve", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}}, func(err error) bool { return err != nil }, "ConfigMap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Create(ctx, tt.obj)
			if !tt.check(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("create: %v, want an error containing %q", err, tt.want)
			}
			if files := storeFiles(t, dir); len(files) != 0 {
				t.Fatalf("a rejected create wrote %v", files)
			}
		})
	}
}

// TestNamespaceGivenAsAPathIsRefused asks every keyed operation of the
// store for a namespace that is a path: each is refused as an invalid
// namespace before a path is formed, never read from another kind's
// directory (hooks/../workers/default is workers/default).
func TestNamespaceGivenAsAPathIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	w := &agentsv1alpha1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w"}, Spec: agentsv1alpha1.WorkerSpec{Command: []string{"true"}}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	ns := "../workers/default"
	h := &agentsv1alpha1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", ResourceVersion: "1"}, Spec: hook("w").Spec}
	ops := []struct {
		name string
		op   func() error
	}{
		{"get", func() error { return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w"}, &agentsv1alpha1.Hook{}) }},
		{"list", func() error { return c.List(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns)) }},
		{"watch", func() error {
			wi, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, client.InNamespace(ns))
			if err == nil {
				wi.Stop()
			}
			return err
		}},
		{"update", func() error { return c.Update(ctx, h.DeepCopy()) }},
		{"patch", func() error { return c.Patch(ctx, h.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{}`))) }},
		{"delete", func() error { return c.Delete(ctx, h.DeepCopy()) }},
		{"delete all of", func() error { return c.DeleteAllOf(ctx, &agentsv1alpha1.Hook{}, client.InNamespace(ns)) }},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			before := storeFiles(t, dir)
			err := o.op()
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "metadata.namespace") || !strings.Contains(err.Error(), ns) {
				t.Fatalf("%s: %v, want a BadRequest naming metadata.namespace %q", o.name, err, ns)
			}
			if after := storeFiles(t, dir); !slices.Equal(after, before) {
				t.Fatalf("%s changed the store: %v, was %v", o.name, after, before)
			}
		})
	}
}

func TestSymlinkedEntryRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	outside := filepath.Join(t.TempDir(), "outside.yaml")
	if err := os.WriteFile(outside, []byte("apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata: {name: link, namespace: default}\nspec: {goal: g, steps: [{name: one}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "hooks", "default"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "hooks", "default", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	err := s.Client().Get(ctx, client.ObjectKey{Namespace: "default", Name: "link"}, &agentsv1alpha1.Hook{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get through a symlink: %v, want NotFound: the entry is quarantined", err)
	}
	if problems := inspect(t, dir); len(problems) != 1 || !strings.Contains(problems[0].Reason, "symbolic link") {
		t.Fatalf("Inspect: %+v, want the symlink", problems)
	}
	symDir := filepath.Join(t.TempDir(), "linked-store")
	if err := os.Symlink(dir, symDir); err != nil {
		t.Fatal(err)
	}
	if _, err := newStore(symDir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("opening a symlinked store: %v, want a refusal", err)
	}
}

func TestCascadeDeletion(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	c := s.Client()
	owner := hook("owner")
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		cp := &agentsv1alpha1.Checkpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("owner-%d", i),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "Hook", Name: owner.Name, UID: owner.UID}}},
			Spec: agentsv1alpha1.CheckpointSpec{HookName: owner.Name, Trigger: agentsv1alpha1.TriggerManual},
		}
		if err := c.Create(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	unrelated := &agentsv1alpha1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "unrelated"},
		Spec:       agentsv1alpha1.CheckpointSpec{HookName: "other", Trigger: agentsv1alpha1.TriggerManual},
	}
	if err := c.Create(ctx, unrelated); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	list := &agentsv1alpha1.CheckpointList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "unrelated" {
		t.Fatalf("after deleting the owner: %d checkpoints left, want only 'unrelated'", len(list.Items))
	}
}

func TestTornJournalTailIsRepaired(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.Client().Create(ctx, hook("before")); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"rv":2,"type":"ADDED","resource":"hooks","namesp`); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	s = openStore(t, dir)
	h := hook("after")
	if err := s.Client().Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	if h.ResourceVersion != "2" {
		t.Errorf("resourceVersion after a torn tail = %s, want 2", h.ResourceVersion)
	}
	list := &agentsv1alpha1.HookList{}
	if err := s.Client().List(ctx, list); err != nil || len(list.Items) != 2 {
		t.Fatalf("list: %v %d", err, len(list.Items))
	}
}

// TestStoresSharingADirectory alternates writes between two stores open
// on one directory, as two processes would be, with a torn tail left in
// between: each store must see the other's journal appends, however much
// it remembers of its own.
func TestStoresSharingADirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stores := []*filestore.Store{openStore(t, dir), openStore(t, dir)}
	for i := range 12 {
		if i == 5 {
			f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(`{"rv":99,"type":"ADDED","reso`); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
		}
		c := stores[i%2].Client()
		h := hook(fmt.Sprintf("shared-%d", i))
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
		if want := strconv.Itoa(2*i + 1); h.ResourceVersion != want {
			t.Fatalf("create %d: resourceVersion %s, want %s", i, h.ResourceVersion, want)
		}
		h.Spec.Goal = "updated"
		if err := stores[(i+1)%2].Client().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
		if want := strconv.Itoa(2*i + 2); h.ResourceVersion != want {
			t.Fatalf("update %d: resourceVersion %s, want %s", i, h.ResourceVersion, want)
		}
	}
	for _, s := range stores {
		list := &agentsv1alpha1.HookList{}
		if err := s.Client().List(ctx, list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 12 || list.ResourceVersion != "24" {
			t.Fatalf("list: %d items at resourceVersion %s, want 12 at 24", len(list.Items), list.ResourceVersion)
		}
	}
}

func TestInterruptedWriteRollsForward(t *testing.T) {
	tests := []struct {
		name string
		// interrupt changes the files after a create (rv 1, content
		// created) and an update (rv 2, the store's newest entry).
		interrupt func(t *testing.T, path string, created []byte)
		// want is the object's goal afterwards, "" when it is deleted.
		want string
	}{
		{
			name: "an update killed before its rename is rolled forward",
			interrupt: func(t *testing.T, path string, created []byte) {
				if err := os.WriteFile(path, created, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: "committed to the journal",
		},
		{
			name: "a write killed before its rename, its temp file complete, is rolled forward",
			interrupt: func(t *testing.T, path string, _ []byte) {
				tmp := filepath.Join(filepath.Dir(path), ".tmp-rolled.yaml-999999999-x")
				if err := os.Rename(path, tmp); err != nil {
					t.Fatal(err)
				}
			},
			want: "committed to the journal",
		},
		{
			name: "rm of the most recently written file deletes the object",
			interrupt: func(t *testing.T, path string, _ []byte) {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			s := openStore(t, dir)
			h := hook("rolled")
			if err := s.Client().Create(ctx, h); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "hooks", "default", "rolled.yaml")
			created, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			h.Spec.Goal = "committed to the journal"
			if err := s.Client().Update(ctx, h); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			tt.interrupt(t, path, created)
			// A writer opening the store rolls the journal forward.
			s = openStore(t, dir)
			if err := s.Client().Create(ctx, hook("other")); err != nil {
				t.Fatal(err)
			}
			got := &agentsv1alpha1.Hook{}
			err = s.Client().Get(ctx, client.ObjectKeyFromObject(h), got)
			if tt.want == "" {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("after rm: %v, want NotFound", err)
				}
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Fatalf("the removed file came back: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Spec.Goal != tt.want || got.ResourceVersion != "2" {
				t.Fatalf("after roll-forward: goal %q rv %s", got.Spec.Goal, got.ResourceVersion)
			}
			if files := storeFiles(t, dir); len(files) != 2 {
				t.Fatalf("files %v, want the two objects only", files)
			}
		})
	}
}

func TestWatchTooOldAfterCompaction(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), func(o *filestore.Options) { o.JournalLimit = 1; o.JournalKeep = 2 })
	c := s.Client()
	h := hook("c")
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		h.Spec.Goal = fmt.Sprintf("goal %d", i)
		if err := c.Update(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	w, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	status, ok := ev.Object.(*metav1.Status)
	if ev.Type != "ERROR" || !ok || status.Code != 410 || status.Reason != metav1.StatusReasonExpired {
		t.Fatalf("watch from a compacted resourceVersion: %v %v, want 410 Expired", ev.Type, ev.Object)
	}
	recent, err := c.Watch(ctx, &agentsv1alpha1.HookList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "5"}})
	if err != nil {
		t.Fatal(err)
	}
	defer recent.Stop()
	ev = <-recent.ResultChan()
	if ev.Type != "MODIFIED" || ev.Object.(*agentsv1alpha1.Hook).Spec.Goal != "goal 4" {
		t.Fatalf("watch from a kept resourceVersion: %v %v, want MODIFIED with goal 4", ev.Type, ev.Object)
	}
}

// TestCompactionIsProportional: a store whose live objects alone pass the
// journal limit compacts in proportion to what was written since its last
// compaction, not at every write (which read, decoded and rewrote every
// object each time); its journal stays within twice what it holds; and
// what a compaction leaves is still a whole store.
func TestCompactionIsProportional(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, func(o *filestore.Options) { o.JournalLimit = 4 << 10; o.JournalKeep = 10 })
	c := s.Client()
	const objects, updates = 100, 300
	for i := range objects {
		h := hook(fmt.Sprintf("h%03d", i))
		h.Spec.Goal = strings.Repeat("a long goal ", 80)
		if err := c.Create(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	journal := filepath.Join(dir, "journal")
	inode := func() uint64 {
		fi, err := os.Stat(journal)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	h := &agentsv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "h000"}, h); err != nil {
		t.Fatal(err)
	}
	compactions, last := 0, inode()
	var maxSize int64
	for i := range updates {
		h.Spec.Goal = fmt.Sprintf("goal %d %s", i, strings.Repeat("x", 1000))
		if err := c.Update(ctx, h); err != nil {
			t.Fatal(err)
		}
		if ino := inode(); ino != last {
			compactions, last = compactions+1, ino
		}
		fi, _ := os.Stat(journal)
		maxSize = max(maxSize, fi.Size())
	}
	if compactions < 1 || compactions > 8 {
		t.Errorf("%d compactions in %d updates of one object among %d, want between 1 and 8 (not one per write)", compactions, updates, objects)
	}
	list := &agentsv1alpha1.HookList{}
	if err := c.List(ctx, list); err != nil || len(list.Items) != objects {
		t.Fatalf("after the compactions: %d Hooks, %v; want %d", len(list.Items), err, objects)
	}
	got := &agentsv1alpha1.Hook{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil || got.Spec.Goal != h.Spec.Goal {
		t.Fatalf("the updated Hook after the compactions: %v", err)
	}
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	var head struct{ Live int64 }
	if err := json.Unmarshal(bytes.SplitN(data, []byte("\n"), 2)[0], &head); err != nil || head.Live <= 0 {
		t.Fatalf("the journal's first line %q holds no live size", bytes.SplitN(data, []byte("\n"), 2)[0])
	}
	if maxSize > 2*head.Live+8<<10 {
		t.Errorf("the journal grew to %d bytes, more than twice the %d the last compaction left", maxSize, head.Live)
	}
}

// A process that sees a watch event and then reads the object must read that
// version or a newer one, as with kube-apiserver: the journal entry becomes
// visible to watchers before the writer has renamed the object file.
func TestGetAfterWatchEventIsNeverOlder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writer := openStore(t, dir).Client()
	reader := openStore(t, dir).Client()
	h := hook("fresh")
	if err := writer.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	w, err := reader.Watch(ctx, &agentsv1alpha1.HookList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: h.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const updates = 40
	errs := make(chan error, 1)
	go func() {
		for i := 0; i < updates; i++ {
			h.Spec.Goal = fmt.Sprintf("goal %d", i)
			if err := writer.Update(ctx, h); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for i := 0; i < updates; i++ {
		ev := <-w.ResultChan()
		seen, ok := ev.Object.(*agentsv1alpha1.Hook)
		if !ok {
			t.Fatalf("watch event %d: %v %v", i, ev.Type, ev.Object)
		}
		got := &agentsv1alpha1.Hook{}
		if err := reader.Get(ctx, client.ObjectKeyFromObject(seen), got); err != nil {
			t.Fatal(err)
		}
		seenRV, _ := strconv.ParseUint(seen.ResourceVersion, 10, 64)
		gotRV, _ := strconv.ParseUint(got.ResourceVersion, 10, 64)
		if gotRV < seenRV {
			t.Fatalf("Get after a watch event for resourceVersion %d returned the older %d", seenRV, gotRV)
		}
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// TestSchemasCompileOnFirstWrite: Open does not compile the schemas, so a
// reader never pays for it; a schema that does not compile fails the write.
func TestSchemasCompileOnFirstWrite(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.Client().Create(context.Background(), hook("kept")); err != nil {
		t.Fatal(err)
	}
	broken := openStore(t, dir, func(o *filestore.Options) {
		for _, c := range o.CRDs {
			c.Spec.PreserveUnknownFields = true
		}
	})
	got := &agentsv1alpha1.Hook{}
	if err := broken.Client().Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "kept"}, got); err != nil {
		t.Fatalf("get with schemas that do not compile: %v", err)
	}
	err := broken.Client().Create(context.Background(), hook("new"))
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "preserveUnknownFields") {
		t.Errorf("create with schemas that do not compile: %v, want an internal error naming the cause", err)
	}
}

// TestStoreIsIgnoredByGit: a store inside a git working tree (tether init's
// DIR/.tether) never shows in git status, so neither commits nor checkpoint
// snapshots carry it; a .gitignore the user put there is left alone.
func TestStoreIsIgnoredByGit(t *testing.T) {
	ws := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	s := openStore(t, filepath.Join(ws, ".tether"))
	if err := s.Client().Create(context.Background(), hook("task")); err != nil {
		t.Fatal(err)
	}
	if out := git("status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("git status shows the store:\n%s", out)
	}

	mine := filepath.Join(t.TempDir(), "store")
	if err := os.MkdirAll(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, ".gitignore"), []byte("journal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	openStore(t, mine)
	if got, _ := os.ReadFile(filepath.Join(mine, ".gitignore")); string(got) != "journal\n" {
		t.Errorf("the user's .gitignore was rewritten: %q", got)
	}
}

// TestJournalSize reads the journal's size: zero before the first write
// (a store nothing was written to has no journal yet), then growing with
// each write.
func TestJournalSize(t *testing.T) {
	s := openStore(t, t.TempDir())
	before, err := s.JournalSize()
	if err != nil || before != 0 {
		t.Fatalf("a new store's journal: %d, %v; want 0, nil", before, err)
	}
	if err := s.Client().Create(context.Background(), hook("sized")); err != nil {
		t.Fatal(err)
	}
	after, err := s.JournalSize()
	if err != nil || after <= before {
		t.Fatalf("after a create the journal is %d bytes (%v); want more than %d", after, err, before)
	}
}
