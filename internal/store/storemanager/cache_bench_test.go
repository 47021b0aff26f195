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
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
)

// BenchmarkCachedObjectBytes reports the heap a cached object holds,
// decoded from its JSON as the caches' lists decode it, without and with
// CacheTransform: Hooks like testdata/hooks/running.yaml and 5 Checkpoints
// per Hook like BenchmarkOperatorScale10k's fleet.
func BenchmarkCachedObjectBytes(b *testing.B) {
	const hooks, perHook = 2000, 5
	data, err := os.ReadFile("../../../testdata/hooks/running.yaml")
	if err != nil {
		b.Fatal(err)
	}
	proto := &v1.Hook{}
	if err := yaml.Unmarshal(data, proto); err != nil {
		b.Fatal(err)
	}
	proto.Spec.Steps[0].Validate = nil
	proto.Status.Steps[0].Receipts = nil
	proto.Status.Conditions = append(proto.Status.Conditions, metav1.Condition{Type: "ReceiptsVerified", Status: "True", Reason: "Verified", Message: "1 passed step verified"})
	commit := strings.Repeat("0123456789", 4)
	now := metav1.NewTime(time.Now())
	var hookJSON, cpJSON [][]byte
	for i := range hooks {
		h := proto.DeepCopy()
		h.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("hook-%05d", i), UID: types.UID(fmt.Sprintf("%08d-1111-2222-3333-444444444444", i)),
			ResourceVersion: "123456", Generation: 1, CreationTimestamp: now}
		h.Spec.Assignee = fmt.Sprintf("agent-%04d", i/10)
		j, _ := json.Marshal(h)
		hookJSON = append(hookJSON, j)
		for seq := 1; seq <= perHook; seq++ {
			ref := fmt.Sprintf("refs/tether/checkpoints/default/%s/%d", h.Name, seq)
			cp := &v1.Checkpoint{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-cp-%d", h.Name, seq), UID: types.UID(fmt.Sprintf("%08d-1111-2222-3333-44444444444%d", i, seq)),
					ResourceVersion: "123457", Generation: 1, CreationTimestamp: now,
					Labels: map[string]string{"agents.tether.dev/hook": h.Name}, Finalizers: []string{"agents.tether.dev/checkpoint-ref"},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "Hook", Name: h.Name, UID: h.UID}}},
				Spec: v1.CheckpointSpec{HookName: h.Name, Trigger: v1.TriggerInterval, Seq: int64(seq), Step: "api", Workspace: "/tmp/BenchmarkLocalOperatorScale10k1234/001",
					Git: &v1.GitState{Branch: "main", Commit: commit, SnapshotRef: ref, SnapshotCommit: commit, SnapshotShort: commit[:12]}},
				Status: v1.CheckpointStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{{Type: v1.ConditionReady, Status: metav1.ConditionTrue,
					Reason: v1.ReasonSnapshotRecorded, Message: ref + " points at " + commit, LastTransitionTime: now, ObservedGeneration: 1}}},
			}
			j, _ := json.Marshal(cp)
			cpJSON = append(cpJSON, j)
		}
	}
	transform := CacheTransform()
	held := func(docs [][]byte, newObj func() any, trim bool) float64 {
		before := liveHeap()
		objs := make([]any, len(docs))
		for i, d := range docs {
			objs[i] = newObj()
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(d, objs[i]); err != nil {
				b.Fatal(err)
			}
			if trim {
				if _, err := transform(objs[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		after := liveHeap()
		runtime.KeepAlive(objs)
		return float64(after-before) / float64(len(docs))
	}
	for range b.N {
		for _, trim := range []bool{false, true} {
			suffix := "B/raw"
			if trim {
				suffix = "B/cached"
			}
			b.ReportMetric(held(hookJSON, func() any { return &v1.Hook{} }, trim), "hook-"+suffix)
			b.ReportMetric(held(cpJSON, func() any { return &v1.Checkpoint{} }, trim), "checkpoint-"+suffix)
		}
	}
	b.ReportMetric(float64(len(hookJSON[0])), "hook-json-B")
	b.ReportMetric(float64(len(cpJSON[0])), "checkpoint-json-B")
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
