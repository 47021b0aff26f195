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

package cli

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestToTableStateColumn(t *testing.T) {
	types := testTypes(t)
	tests := []struct {
		resource string
		status   map[string]interface{}
		want     interface{}
	}{
		{"hooks", nil, "initializing"},
		{"hooks", map[string]interface{}{}, "initializing"},
		{"hooks", map[string]interface{}{"state": ""}, "initializing"},
		{"hooks", map[string]interface{}{"state": "running"}, "running"},
		{"hooks", map[string]interface{}{"state": "awaiting_human"}, "awaiting_human"},
		{"workers", nil, nil},
	}
	for _, tt := range tests {
		rts, err := types.Resolve(tt.resource)
		if err != nil {
			t.Fatal(err)
		}
		rt := rts[0]
		obj := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": rt.GVK.GroupVersion().String(),
			"kind":       rt.GVK.Kind,
			"metadata":   map[string]interface{}{"name": "a", "namespace": "default"},
		}}
		if tt.status != nil {
			obj.Object["status"] = tt.status
		}
		table, err := ToTable(context.Background(), rt, []*unstructured.Unstructured{obj})
		if err != nil {
			t.Fatal(err)
		}
		col := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Name == "State" })
		if rt.GVK.Kind != "Hook" {
			if col >= 0 && table.Rows[0].Cells[col] != tt.want {
				t.Errorf("%s: State cell = %v, want %v", tt.resource, table.Rows[0].Cells[col], tt.want)
			}
			continue
		}
		if col < 0 {
			t.Fatalf("hooks table has no State column: %+v", table.ColumnDefinitions)
		}
		if got := table.Rows[0].Cells[col]; got != tt.want {
			t.Errorf("%s with status %v: State cell = %v, want %v", tt.resource, tt.status, got, tt.want)
		}
	}
}

// TestToTableInPartsIsOneConversion converts a list large enough to be
// converted in parts and checks every row against one conversion of the
// whole list by the CRD table convertor.
func TestToTableInPartsIsOneConversion(t *testing.T) {
	rts, err := testTypes(t).Resolve("hooks")
	if err != nil {
		t.Fatal(err)
	}
	rt := rts[0]
	created := metav1.NewTime(time.Now().Add(-50 * time.Hour))
	objs := make([]*unstructured.Unstructured, 3*tablePart+7)
	whole := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
	for i := range objs {
		objs[i] = &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": rt.GVK.GroupVersion().String(),
			"kind":       rt.GVK.Kind,
			"metadata":   map[string]interface{}{"name": fmt.Sprintf("h-%05d", i), "namespace": "default", "creationTimestamp": created.UTC().Format(time.RFC3339)},
			"spec":       map[string]interface{}{"assignee": fmt.Sprintf("agent-%d", i%7), "suspend": i%2 == 0},
			"status": map[string]interface{}{"state": "step_running", "currentStep": map[string]interface{}{"name": "s", "attempt": int64(i % 5)},
				"conditions": []interface{}{map[string]interface{}{"type": "HistoryConsistent", "reason": []string{"HistoryMismatch", "Consistent"}[i%2]}}},
		}}
		whole.Items = append(whole.Items, *objs[i])
	}
	table, err := ToTable(context.Background(), rt, objs)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := tableconvertor.New(rt.Version().AdditionalPrinterColumns)
	if err != nil {
		t.Fatal(err)
	}
	want, err := conv.ConvertToTable(context.Background(), whole, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != len(want.Rows) {
		t.Fatalf("%d rows, want %d", len(table.Rows), len(want.Rows))
	}
	for i := range want.Rows {
		if !reflect.DeepEqual(table.Rows[i].Cells, want.Rows[i].Cells) {
			t.Fatalf("row %d: %v, want %v", i, table.Rows[i].Cells, want.Rows[i].Cells)
		}
		if table.Rows[i].Object.Object != objs[i] {
			t.Fatalf("row %d does not point at its object", i)
		}
	}
}
