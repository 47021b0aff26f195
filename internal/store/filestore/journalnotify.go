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
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
)

// journalNotifier tells a store's watches that its journal may have
// changed, through one inotify instance on the store directory however
// many watches run. A watch with an instance of its own would take one of
// the user's fs.inotify.max_user_instances (128 by default, shared by
// every process of the user) and a goroutine whose fsnotify reader holds
// a 256 KiB stack, for each informer, `tether get --watch` and console
// page.
type journalNotifier struct {
	mu sync.Mutex
	// fsw is the instance while a watch is subscribed, else nil.
	fsw *fsnotify.Watcher
	// subs are fsw's subscribers; stopped is closed once fsw's
	// dispatching goroutine has returned.
	subs    map[chan struct{}]struct{}
	stopped chan struct{}
}

// subscribe returns a channel that receives a value whenever the journal
// in dir may have changed since the last value was received, or file
// notifications were lost, and the function that ends the subscription.
// Values are coalesced: a receiver that drains the journal after each
// one misses nothing. The first subscriber starts the instance, the last
// one to end stops it and waits for its goroutine.
func (n *journalNotifier) subscribe(dir string, log logr.Logger) (<-chan struct{}, func(), error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fsw == nil {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, nil, err
		}
		if err := fsw.Add(dir); err != nil {
			_ = fsw.Close()
			return nil, nil, err
		}
		n.fsw, n.subs, n.stopped = fsw, map[chan struct{}]struct{}{}, make(chan struct{})
		go n.dispatch(fsw, n.stopped, log)
	}
	ch := make(chan struct{}, 1)
	n.subs[ch] = struct{}{}
	var once sync.Once
	return ch, func() { once.Do(func() { n.unsubscribe(ch) }) }, nil
}

func (n *journalNotifier) unsubscribe(ch chan struct{}) {
	n.mu.Lock()
	delete(n.subs, ch)
	if len(n.subs) > 0 || n.fsw == nil {
		n.mu.Unlock()
		return
	}
	fsw, stopped := n.fsw, n.stopped
	n.fsw, n.subs, n.stopped = nil, nil, nil
	n.mu.Unlock()
	_ = fsw.Close()
	<-stopped
}

// dispatch wakes fsw's subscribers on each event of the journal file and
// on each lost notification, until fsw is closed.
func (n *journalNotifier) dispatch(fsw *fsnotify.Watcher, stopped chan struct{}, log logr.Logger) {
	defer close(stopped)
	for {
		select {
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			if filepath.Base(ev.Name) == journalName {
				n.wake(fsw)
			}
		case err, ok := <-fsw.Errors:
			if !ok {
				return
			}
			// An inotify overflow may have dropped journal events; each
			// watch reads the journal again after its last resourceVersion.
			log.Info("watch: file notification error, re-reading the journal", "error", err.Error())
			n.wake(fsw)
		}
	}
}

// wake sends each subscriber of fsw a value unless one is pending.
func (n *journalNotifier) wake(fsw *fsnotify.Watcher) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fsw != fsw {
		return
	}
	for ch := range n.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
