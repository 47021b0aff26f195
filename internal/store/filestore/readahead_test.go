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

package filestore

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestReadAheadYieldsToWhatTheFileHoldsUnderTheLock: an update decodes the
// object it replaces before the write lock, and uses it under the lock
// only while the file holds the very bytes it decoded: an unchanged file
// gives the object read ahead; a hand edit landing in between (a rewrite,
// or an in-place edit of the same size with its mtime put back) is
// adopted and its object returned; a file holding a hand edit is not read
// ahead at all.
func TestReadAheadYieldsToWhatTheFileHoldsUnderTheLock(t *testing.T) {
	s := openCoreStore(t)
	ctx := context.Background()
	c := s.Client()
	r := s.byPlural["events"]
	create := func(name string) string {
		t.Helper()
		ev := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "Event",
			"metadata": map[string]interface{}{"name": name, "namespace": "default"},
			"message":  "written by the store",
		}}
		if err := c.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
		return s.objectPath(r, "default", name)
	}
	current := func(name string, ahead *aheadRead) *unstructured.Unstructured {
		t.Helper()
		var got *unstructured.Unstructured
		if err := s.withWriteLock(func() error {
			var err error
			got, err = s.currentAfter(ctx, r, "default", name, ahead)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	handEdit := func(path, from, to string, keepTimes bool) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		edited := bytes.Replace(data, []byte(from), []byte(to), 1)
		if bytes.Equal(edited, data) {
			t.Fatalf("%s holds no %q", path, from)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(edited, 0); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		if keepTimes {
			if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}
	}

	create("unchanged")
	ahead := s.readAhead(r, "default", "unchanged")
	if ahead == nil {
		t.Fatal("a store-written file was not read ahead")
	}
	if got := current("unchanged", ahead); got != ahead.obj {
		t.Errorf("an unchanged file: currentAfter read it again")
	}

	for _, tt := range []struct {
		name      string
		keepTimes bool
	}{{"edited-in-between", false}, {"same-size-edit-mtime-kept", true}} {
		path := create(tt.name)
		ahead = s.readAhead(r, "default", tt.name)
		if ahead == nil {
			t.Fatalf("%s: not read ahead", tt.name)
		}
		handEdit(path, "written by the store", "written by a person", tt.keepTimes)
		got := current(tt.name, ahead)
		if got == ahead.obj || got.Object["message"] != "written by a person" {
			t.Errorf("%s: currentAfter = %v, want the hand edit adopted", tt.name, got.Object["message"])
		}
	}

	path := create("edited-before")
	handEdit(path, "written by the store", "written by a person", false)
	time.Sleep(10 * time.Millisecond)
	if ahead := s.readAhead(r, "default", "edited-before"); ahead != nil {
		t.Errorf("a file holding a hand edit was read ahead")
	}
	if s.readAhead(r, "default", "never-written") != nil {
		t.Errorf("an object that does not exist was read ahead")
	}
}
