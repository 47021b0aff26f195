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

package eventsink_test

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/store/eventsink"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// TestSeriesOnKubeAPIServer records repeats and new notes through a
// Provider writing to kube-apiserver, with client-go's sink (as tether
// run --cluster does) and with EventsSink over a client: a repeat is a
// series patch the API server accepts, and a new note, which an
// events.k8s.io/v1 Event may not change to, is an Event of its own.
func TestSeriesOnKubeAPIServer(t *testing.T) {
	env := testenv.Start(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	sinks := []struct {
		name string
		sink events.EventSink
	}{
		{"client-go's EventSinkImpl", &events.EventSinkImpl{Interface: cs.EventsV1()}},
		{"EventsSink", eventsink.NewEventsSink(env.Client)},
	}
	for i, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			p := eventsink.NewProviderForSink(s.sink, env.Client.Scheme())
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "subject-" + string(rune('a'+i))}}
			if err := env.Client.Create(context.Background(), cm); err != nil {
				t.Fatal(err)
			}
			rec := p.GetEventRecorder("tether-test")
			for _, note := range []string{"first", "first", "second", "first"} {
				rec.Eventf(cm, nil, corev1.EventTypeWarning, "Refused", "Check", "%s", note)
			}
			p.Shutdown()
			want := map[string]int32{"first": 3, "second": 1}
			var got map[string]int32
			err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
				list := &corev1.EventList{}
				if err := env.Client.List(ctx, list, client.InNamespace("default")); err != nil {
					return false, err
				}
				got = map[string]int32{}
				for _, ev := range list.Items {
					if ev.InvolvedObject.Name != cm.Name {
						continue
					}
					n := int32(1)
					if ev.Series != nil {
						n = ev.Series.Count
					}
					got[ev.Message] += n
				}
				return maps.Equal(got, want), nil
			})
			if err != nil {
				t.Fatalf("Events %v, want %v", got, want)
			}
		})
	}
}
