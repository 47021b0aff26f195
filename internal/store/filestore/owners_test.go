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
	"fmt"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// ownedStore fills a store with two owners, each with three Checkpoints,
// among 40 unowned Hooks, and returns the owners.
func ownedStore(t *testing.T, s *filestore.Store) (a, b *agentsv1alpha1.Hook) {
	t.Helper()
	ctx := context.Background()
	c := s.Client()
	a, b = hook("owner-a"), hook("owner-b")
	must(t, c.Create(ctx, a))
	must(t, c.Create(ctx, b))
	for i := range 40 {
		must(t, c.Create(ctx, hook(fmt.Sprintf("h-%02d", i))))
	}
	for _, owner := range []*agentsv1alpha1.Hook{a, b} {
		for i := range 3 {
			must(t, c.Create(ctx, checkpointOf(owner, i)))
		}
	}
	return a, b
}

func checkpointOf(owner *agentsv1alpha1.Hook, i int) *agentsv1alpha1.Checkpoint {
	return &agentsv1alpha1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: fmt.Sprintf("%s-%d", owner.Name, i),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: agentsv1alpha1.GroupVersion.String(), Kind: "Hook", Name: owner.Name, UID: owner.UID}}},
		Spec: agentsv1alpha1.CheckpointSpec{HookName: owner.Name, Trigger: agentsv1alpha1.TriggerManual},
	}
}

// checkpointNames lists the Checkpoints left.
func checkpointNames(t *testing.T, s *filestore.Store) map[string]bool {
	t.Helper()
	list := &agentsv1alpha1.CheckpointList{}
	must(t, s.Client().List(context.Background(), list))
	out := map[string]bool{}
	for _, cp := range list.Items {
		out[cp.Name] = true
	}
	return out
}

// TestOwnerIndexDamaged deletes an owner in a new process after its owner
// index was saved and then damaged in each way a disk or a person can: the
// index must be found wrong and rebuilt (or read on from where it still
// holds), and the deletion must take exactly the owner's dependents.
func TestOwnerIndexDamaged(t *testing.T) {
	ownersFile := func(dir string) string { return filepath.Join(dir, ".owners") }
	tests := []struct {
		name    string
		damage  func(t *testing.T, dir string, s *filestore.Store, b *agentsv1alpha1.Hook)
		rebuild bool
	}{
		{name: "intact", damage: func(*testing.T, string, *filestore.Store, *agentsv1alpha1.Hook) {}},
		{name: "deleted", rebuild: true, damage: func(t *testing.T, dir string, _ *filestore.Store, _ *agentsv1alpha1.Hook) {
			must(t, os.Remove(ownersFile(dir)))
		}},
		{name: "truncated", rebuild: true, damage: func(t *testing.T, dir string, _ *filestore.Store, _ *agentsv1alpha1.Hook) {
			data, err := os.ReadFile(ownersFile(dir))
			must(t, err)
			must(t, os.WriteFile(ownersFile(dir), data[:len(data)/2], 0o600))
		}},
		{name: "empty", rebuild: true, damage: func(t *testing.T, dir string, _ *filestore.Store, _ *agentsv1alpha1.Hook) {
			must(t, os.WriteFile(ownersFile(dir), nil, 0o600))
		}},
		{name: "hand-edited to drop a dependent", rebuild: true, damage: func(t *testing.T, dir string, _ *filestore.Store, b *agentsv1alpha1.Hook) {
			data, err := os.ReadFile(ownersFile(dir))
			must(t, err)
			edited := bytes.Replace(data, []byte("checkpoints default owner-b-1 "+string(b.UID)+"\n"), nil, 1)
			if bytes.Equal(edited, data) {
				t.Fatalf("no line of owner-b-1 in\n%s", data)
			}
			must(t, os.WriteFile(ownersFile(dir), edited, 0o600))
		}},
		{name: "a symbolic link", rebuild: true, damage: func(t *testing.T, dir string, _ *filestore.Store, _ *agentsv1alpha1.Hook) {
			other := filepath.Join(t.TempDir(), "owners")
			must(t, os.Rename(ownersFile(dir), other))
			must(t, os.Symlink(other, ownersFile(dir)))
		}},
		{name: "behind the journal", damage: func(t *testing.T, dir string, s *filestore.Store, b *agentsv1alpha1.Hook) {
			// Written to after the index was saved: the index reads on.
			must(t, s.Client().Create(context.Background(), checkpointOf(b, 7)))
		}},
		{name: "of a compacted journal", rebuild: true, damage: func(t *testing.T, dir string, s *filestore.Store, b *agentsv1alpha1.Hook) {
			compacting := openStore(t, dir, func(o *filestore.Options) { o.JournalLimit, o.JournalKeep = 1, 1 })
			must(t, compacting.Client().Create(context.Background(), checkpointOf(b, 7)))
			must(t, compacting.Close())
		}},
		{name: "of a journal rewritten in place", rebuild: true, damage: func(t *testing.T, dir string, s *filestore.Store, b *agentsv1alpha1.Hook) {
			// The same inode, other lines where the index ends: as a
			// journal put back from a copy with cp.
			journal := filepath.Join(dir, "journal")
			indexed, err := os.ReadFile(journal)
			must(t, err)
			for i := 7; i < 10; i++ {
				must(t, s.Client().Create(context.Background(), checkpointOf(b, i)))
			}
			grown, err := os.ReadFile(journal)
			must(t, err)
			f, err := os.OpenFile(journal, os.O_WRONLY|os.O_TRUNC, 0)
			must(t, err)
			// The lines before the owner-a deletion, then the creates.
			deletion := bytes.Index(indexed, []byte(`"type":"DELETED"`))
			if deletion < 0 {
				t.Fatalf("no deletion in the journal")
			}
			before := indexed[:deletion]
			before = before[:bytes.LastIndexByte(before, '\n')+1]
			_, err = f.Write(append(bytes.Clone(before), grown[len(indexed):]...))
			must(t, err)
			must(t, f.Close())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			s := openStore(t, dir)
			a, b := ownedStore(t, s)
			// The first deletion builds the index and saves it.
			must(t, s.Client().Delete(ctx, a))
			if _, err := os.Stat(ownersFile(dir)); err != nil {
				t.Fatalf("no owner index saved: %v", err)
			}
			tt.damage(t, dir, s, b)
			must(t, s.Close())

			s = openStore(t, dir)
			n, byIndex := s.CollectingByIndex(string(b.UID), "default")
			if !byIndex {
				t.Fatalf("the collector would list every object")
			}
			want := map[string]bool{}
			for name := range checkpointNames(t, s) {
				want[name] = true
			}
			if n != len(want) {
				t.Errorf("the index names %d dependents of owner-b, want the %d there are (%v)", n, len(want), want)
			}
			must(t, s.Client().Delete(ctx, b))
			if left := checkpointNames(t, s); len(left) > 0 {
				t.Errorf("left after both owners were deleted: %v", left)
			}
			if _, rebuilds := s.OwnersStats(); (rebuilds > 0) != tt.rebuild {
				t.Errorf("rebuilds = %d, want a rebuild: %v", rebuilds, tt.rebuild)
			}
			hooks := &agentsv1alpha1.HookList{}
			must(t, s.Client().List(ctx, hooks))
			if len(hooks.Items) != 40 {
				t.Errorf("%d Hooks left, want the 40 unowned", len(hooks.Items))
			}
		})
	}
}

// TestOwnerIndexCorruptJournalLine: a corrupt journal line could have
// held any object's owner references, so the collector lists instead of
// trusting the index, and still finds every dependent.
func TestOwnerIndexCorruptJournalLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	_, b := ownedStore(t, s)
	must(t, s.Close())
	f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("{\"rv\":9999,\"type\":\"MODIFIED\",\"resource\":\"checkpoints\",\"namespace\":\"default\",\"name\":\"x\",\"object\":{broken}\n")
	must(t, err)
	must(t, f.Close())
	s = openStore(t, dir)
	// Not the newest line, which the store would drop.
	must(t, s.Client().Create(ctx, checkpointOf(b, 7)))
	if _, byIndex := s.CollectingByIndex(string(b.UID), "default"); byIndex {
		t.Errorf("the collector trusts an index built over a corrupt line")
	}
	must(t, s.Client().Delete(ctx, b))
	for name := range checkpointNames(t, s) {
		if name != "owner-a-0" && name != "owner-a-1" && name != "owner-a-2" {
			t.Errorf("%s left after its owner was deleted", name)
		}
	}
}

// TestHandEditAddingAnOwner: an ownerReference added by hand is found by
// the collector once adopted (the index follows the journal), and one
// naming an owner already deleted, adopted after the deletion, has the
// object collected then, as Kubernetes' collector deletes a dependent
// whose owners are gone. An edit naming a live owner is kept.
func TestHandEditAddingAnOwner(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	c := s.Client()
	a, b := ownedStore(t, s)
	must(t, c.Delete(ctx, a)) // the index is built and saved
	addOwner := func(name string, owner *agentsv1alpha1.Hook) {
		t.Helper()
		path := filepath.Join(dir, "hooks", "default", name+".yaml")
		data, err := os.ReadFile(path)
		must(t, err)
		withRef := bytes.Replace(data, []byte("\n  name: "+name+"\n"), []byte(fmt.Sprintf("\n  name: %s\n  ownerReferences:\n  - apiVersion: %s\n    kind: Hook\n    name: %s\n    uid: %s\n", name, agentsv1alpha1.GroupVersion, owner.Name, owner.UID)), 1)
		if bytes.Equal(withRef, data) {
			t.Fatalf("no name line in\n%s", data)
		}
		must(t, os.WriteFile(path, withRef, 0o600))
	}
	// Adopted before the owner goes: the journal, and so the index, has it.
	addOwner("h-01", b)
	h := &agentsv1alpha1.Hook{}
	must(t, c.Get(ctx, objectKey("h-01"), h))
	if len(h.OwnerReferences) != 1 {
		t.Fatalf("the hand edit was not adopted: %+v", h.OwnerReferences)
	}
	// Edited by hand in a process that never reads it before the deletion.
	addOwner("h-02", b)
	// Naming an owner already gone, and one naming a live owner.
	addOwner("h-03", a)
	addOwner("h-04", ownerOf(t, c, "h-05"))
	n, byIndex := s.CollectingByIndex(string(b.UID), "default")
	if !byIndex || n != 4 {
		t.Errorf("the index names %d dependents of owner-b (by index: %v), want its 3 Checkpoints and h-01", n, byIndex)
	}
	must(t, c.Delete(ctx, b))
	hooks := &agentsv1alpha1.HookList{}
	must(t, c.List(ctx, hooks))
	left := map[string]bool{}
	for _, h := range hooks.Items {
		left[h.Name] = true
	}
	for _, gone := range []string{"h-01", "h-02", "h-03"} {
		if left[gone] {
			t.Errorf("%s, owned by a deleted Hook, is still there", gone)
		}
	}
	if !left["h-04"] || !left["h-05"] || len(hooks.Items) != 37 {
		t.Errorf("%d Hooks left (h-04 %v, h-05 %v), want 37 with h-04 and its owner h-05", len(hooks.Items), left["h-04"], left["h-05"])
	}
	if cps := checkpointNames(t, s); len(cps) > 0 {
		t.Errorf("Checkpoints left: %v", cps)
	}
}

func objectKey(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: "default", Name: name}
}

func ownerOf(t *testing.T, c *filestore.Client, name string) *agentsv1alpha1.Hook {
	t.Helper()
	h := &agentsv1alpha1.Hook{}
	must(t, c.Get(context.Background(), objectKey(name), h))
	return h
}
