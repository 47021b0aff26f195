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

package supervise

import "sync"

// ExitNotice carries the Exit of one process to whoever asks for it,
// before or after the process ends. Nothing waits for the end on the
// asker's behalf: the notice is called when it comes.
type ExitNotice struct {
	mu    sync.Mutex
	exit  *Exit
	calls []func(Exit)
	ch    chan Exit
}

func newExitNotice() *ExitNotice { return &ExitNotice{} }

// endedNotice is the notice of a process found already ended.
func endedNotice(e Exit) *ExitNotice { return &ExitNotice{exit: &e} }

// Ended returns the Exit, once the process has ended.
func (n *ExitNotice) Ended() (Exit, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.exit == nil {
		return Exit{}, false
	}
	return *n.exit, true
}

// Notify calls fn once with the Exit when the process ends, or at once if
// it already has; fn never runs on the caller's goroutine, and may block.
func (n *ExitNotice) Notify(fn func(Exit)) {
	n.mu.Lock()
	if n.exit == nil {
		n.calls = append(n.calls, fn)
		n.mu.Unlock()
		return
	}
	e := *n.exit
	n.mu.Unlock()
	go fn(e)
}

// C returns a channel that receives the Exit once the process ends; every
// call returns the same channel.
func (n *ExitNotice) C() <-chan Exit {
	n.mu.Lock()
	if n.ch != nil {
		defer n.mu.Unlock()
		return n.ch
	}
	ch := make(chan Exit, 1)
	n.ch = ch
	n.mu.Unlock()
	n.Notify(func(e Exit) { ch <- e })
	return ch
}

// deliver records e, the first Exit delivered, and calls what Notify was
// given: the last from the caller's goroutine, which is the poller's
// goroutine for this one exit, the others from goroutines of their own.
func (n *ExitNotice) deliver(e Exit) {
	n.mu.Lock()
	if n.exit != nil {
		n.mu.Unlock()
		return
	}
	n.exit = &e
	calls := n.calls
	n.calls = nil
	n.mu.Unlock()
	for i, fn := range calls {
		if i == len(calls)-1 {
			fn(e)
		} else {
			go fn(e)
		}
	}
}
