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

package follow_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tether-dev/tether/internal/kubectl/follow"
)

// scripted is a client whose watch sends the events of a script.
type scripted struct {
	client.WithWatch
	w *watch.FakeWatcher
}

func (s scripted) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return s.w, nil
}

func pod(name string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}} }

func TestWatch(t *testing.T) {
	errHandle := errors.New("printer failed")
	cases := []struct {
		name string
		// script runs against the watcher; cancel ends the context after it.
		script   func(w *watch.FakeWatcher)
		cancel   bool
		failOn   string
		want     []string
		wantErr  string
		wantType []watch.EventType
	}{
		{name: "changes until the context ends", cancel: true,
			script: func(w *watch.FakeWatcher) {
				w.Add(pod("a"))
				w.Action(watch.Bookmark, pod(""))
				w.Modify(pod("a"))
				w.Delete(pod("a"))
			},
			want: []string{"a", "a", "a"}, wantType: []watch.EventType{watch.Added, watch.Modified, watch.Deleted}},
		{name: "closed by the backend", script: func(w *watch.FakeWatcher) { w.Add(pod("a")); w.Stop() },
			want: []string{"a"}, wantType: []watch.EventType{watch.Added}, wantErr: follow.ErrClosed.Error()},
		{name: "an error from the backend", script: func(w *watch.FakeWatcher) {
			w.Error(&metav1.Status{Message: "too old resource version"})
		}, wantErr: "watch: too old resource version"},
		{name: "the handler fails", failOn: "b", script: func(w *watch.FakeWatcher) { w.Add(pod("a")); w.Add(pod("b")); w.Add(pod("c")) },
			want: []string{"a", "b"}, wantType: []watch.EventType{watch.Added, watch.Added}, wantErr: errHandle.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := watch.NewFakeWithChanSize(10, false)
			c := scripted{WithWatch: fake.NewClientBuilder().Build(), w: w}
			tc.script(w)
			var got []string
			var types []watch.EventType
			done := make(chan error, 1)
			go func() {
				done <- follow.Watch(ctx, c, &corev1.PodList{}, func(typ watch.EventType, obj runtime.Object) error {
					p := obj.(*corev1.Pod)
					got, types = append(got, p.Name), append(types, typ)
					if len(got) == len(tc.want) && tc.cancel {
						cancel()
					}
					if p.Name == tc.failOn {
						return errHandle
					}
					return nil
				})
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Watch did not return")
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("Watch = %v, want %q", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) || !slices.Equal(types, tc.wantType) {
				t.Errorf("handled %v %v, want %v %v", got, types, tc.want, tc.wantType)
			}
		})
	}
}
