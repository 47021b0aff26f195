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
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	tetherv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
)

// ToTable converts objects of type rt into the Table the API server would
// return for them: for a CRD, through the API server's own CRD table
// convertor and the CRD's additionalPrinterColumns; for Events, with the
// columns of kube-apiserver's Event printer. The table carries every
// column, wide ones included; the printer drops those of priority > 0.
func ToTable(ctx context.Context, rt ResourceType, objs []*unstructured.Unstructured) (*metav1.Table, error) {
	list := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
	list.Items = make([]unstructured.Unstructured, len(objs))
	for i, o := range objs {
		list.Items[i] = *o
	}
	if rt.CRD == nil {
		return eventTable(list)
	}
	v := rt.Version()
	if v == nil {
		return nil, fmt.Errorf("%s: the CRD does not serve version %s", rt.Qualified(), rt.GVK.Version)
	}
	table, err := convertInParts(ctx, rt, v.AdditionalPrinterColumns, list)
	if err != nil {
		return nil, err
	}
	// Rows point into list.Items; point them at the caller's objects so
	// printers that read the row object see the same one.
	for i := range table.Rows {
		table.Rows[i].Object = runtime.RawExtension{Object: objs[i]}
	}
	if rt.GVK.Kind == "Hook" {
		showInitializing(table)
	}
	return table, nil
}

// tablePart is how many objects make a table worth converting in parts,
// on every CPU.
const tablePart = 1024

// convertInParts converts list to a Table through the CRD table
// convertor, in parts of at least tablePart objects converted on every
// CPU, each by a convertor of its own (its JSONPaths keep state while they
// run). Each row depends on its object alone, so the rows joined are the
// rows of one conversion.
func convertInParts(ctx context.Context, rt ResourceType, columns []apiextensionsv1.CustomResourceColumnDefinition, list *unstructured.UnstructuredList) (*metav1.Table, error) {
	parts := min(goruntime.GOMAXPROCS(0), len(list.Items)/tablePart)
	if parts < 2 {
		parts = 1
	}
	tables := make([]*metav1.Table, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conv, err := tableconvertor.New(columns)
			if err != nil {
				errs[p] = fmt.Errorf("%s printer columns: %w", rt.Qualified(), err)
				return
			}
			part := list
			if parts > 1 {
				from, to := p*len(list.Items)/parts, (p+1)*len(list.Items)/parts
				part = &unstructured.UnstructuredList{Object: list.Object, Items: list.Items[from:to]}
			}
			tables[p], errs[p] = conv.ConvertToTable(ctx, part, nil)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	table := tables[0]
	for _, t := range tables[1:] {
		table.Rows = append(table.Rows, t.Rows...)
	}
	return table, nil
}

// showInitializing fills the State cell of a Hook no reconciler has
// initialized yet, which has no status.state, with the state describe and
// recover show for it, so every view of the Hook says the same.
func showInitializing(table *metav1.Table) {
	col := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Name == "State" })
	if col < 0 {
		return
	}
	for i := range table.Rows {
		cells := table.Rows[i].Cells
		if col < len(cells) && (cells[col] == nil || cells[col] == "") {
			cells[col] = string(tetherv1alpha1.HookInitializing)
		}
	}
}

// eventColumns are kube-apiserver's Event printer columns
// (pkg/printers/internalversion), which kubectl shows for `get events`.
var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: "Time since the event was last seen."},
	{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
	{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
	{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.Event{}.InvolvedObject.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
	{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
	{Name: "Name", Type: "string", Priority: 1, Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
}

func eventTable(list *unstructured.UnstructuredList) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: eventColumns}
	table.ResourceVersion = list.GetResourceVersion()
	for i := range list.Items {
		u := &list.Items[i]
		e := &corev1.Event{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, e); err != nil {
			return nil, fmt.Errorf("event %s: %w", u.GetName(), err)
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: eventCells(e), Object: runtime.RawExtension{Object: u}})
	}
	return table, nil
}

// eventCells is kube-apiserver's printEvent with wide output.
func eventCells(e *corev1.Event) []interface{} {
	first := since(e.FirstTimestamp.Time)
	if e.FirstTimestamp.IsZero() {
		first = since(e.EventTime.Time)
	}
	last := since(e.LastTimestamp.Time)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = since(e.Series.LastObservedTime.Time)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return []interface{}{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
		eventSource(e), strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}
}

func eventSource(e *corev1.Event) string {
	component, instance := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if instance == "" {
		instance = e.ReportingInstance
	}
	switch {
	case component == "" && instance == "":
		return ""
	case instance == "":
		return component
	}
	return component + ", " + instance
}

func since(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t))
}
