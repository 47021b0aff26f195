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

// Package follow is the one watch loop of the verbs that print changes as
// they happen (tether get -w, tether events -w), on any client.WithWatch.
package follow

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrClosed is returned when the backend ends the watch while ctx is live.
var ErrClosed = errors.New("the watch ended: the backend closed it")

// Watch watches list's kind with opts and hands each added, modified or
// deleted object to handle, until ctx ends (nil), handle fails (its
// error), the backend sends an error (its message) or closes the watch
// (ErrClosed). Bookmarks are skipped.
func Watch(ctx context.Context, c client.WithWatch, list client.ObjectList, handle func(watch.EventType, runtime.Object) error, opts ...client.ListOption) error {
	w, err := c.Watch(ctx, list, opts...)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return ErrClosed
			}
			switch ev.Type {
			case watch.Error:
				if status, ok := ev.Object.(*metav1.Status); ok {
					return fmt.Errorf("watch: %s", status.Message)
				}
				return fmt.Errorf("watch: %v", ev.Object)
			case watch.Bookmark:
				continue
			}
			if err := handle(ev.Type, ev.Object); err != nil {
				return err
			}
		}
	}
}
