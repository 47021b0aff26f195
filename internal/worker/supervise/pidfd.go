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

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// exitWaiter waits for a process to end through its pidfd, parked on the
// runtime's poller: a goroutine waiting costs its stack, not an OS thread
// blocked in poll(2) or waitid(2), each of which takes 48 KB of Go stacks
// (its g0 and signal stacks) besides its kernel thread. `tether run`
// supervising a thousand Workers then holds a thousand parked goroutines
// rather than a thousand threads.
type exitWaiter struct {
	f      *os.File
	closed atomic.Bool
}

// newExitWaiter takes over the pidfd fd (closing it on error).
func newExitWaiter(fd int) (*exitWaiter, error) {
	// A pidfd is pollable; in non-blocking mode os.NewFile registers it
	// with the poller.
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return &exitWaiter{f: os.NewFile(uintptr(fd), "pidfd")}, nil
}

// wait returns nil once the process has ended, and an error once close
// was called first (closedWhileWaiting) or the pidfd failed.
func (w *exitWaiter) wait() error {
	rc, err := w.f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Read(func(fd uintptr) bool {
		// Called at once, then each time the poller says readable: a
		// pidfd stays readable once its process has ended.
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err == nil && n > 0
	})
}

// close ends a wait in progress, and releases the pidfd.
func (w *exitWaiter) close() {
	w.closed.Store(true)
	_ = w.f.Close()
}

// closedWhileWaiting tells whether wait's err answers close.
func (w *exitWaiter) closedWhileWaiting(err error) bool { return err != nil && w.closed.Load() }
