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
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// exitPoller waits for the ends of every process this process follows, by
// their pidfds, with one epoll instance and one goroutine. A goroutine per
// process parked on the runtime's poller costs its stack (about 6 KB), and
// a thread blocked in poll(2) or waitid(2) costs 48 KB of Go stacks and a
// kernel thread: `tether run` following a thousand Workers holds one
// waiting goroutine, not a thousand.
type exitPoller struct {
	epfd int

	mu    sync.Mutex
	next  uint64
	waits map[uint64]pidfdWait
	// broken is the error that ended the poller; nothing is added after it.
	broken error
}

// pidfdWait is one pidfd and what its readiness calls.
type pidfdWait struct {
	fd    int
	ended func()
}

var sharedExitPoller struct {
	once sync.Once
	p    *exitPoller
	err  error
}

// exitPollerOf returns the process's exitPoller, started at its first use.
func exitPollerOf() (*exitPoller, error) {
	sharedExitPoller.once.Do(func() {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			sharedExitPoller.err = fmt.Errorf("epoll_create1: %w", err)
			return
		}
		p := &exitPoller{epfd: epfd, waits: map[uint64]pidfdWait{}}
		sharedExitPoller.p = p
		go p.run()
	})
	return sharedExitPoller.p, sharedExitPoller.err
}

// add takes over the pidfd fd and calls ended once, from a goroutine of its
// own, when the process has ended, or when the poller can no longer tell
// (a watch that cannot tell must not stay silent). cancel ends the wait
// without calling ended, unless it was already called. fd is closed in
// every case.
func (p *exitPoller) add(fd int, ended func()) (cancel func(), err error) {
	p.mu.Lock()
	if p.broken != nil {
		p.mu.Unlock()
		_ = unix.Close(fd)
		return nil, p.broken
	}
	p.next++
	token := p.next
	p.waits[token] = pidfdWait{fd: fd, ended: ended}
	p.mu.Unlock()
	// The token, not the fd, names the wait in the event: once a wait is
	// cancelled its fd number can be reused by an unrelated open.
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(uint32(token)), Pad: int32(uint32(token >> 32))}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		if _, ok := p.take(token); ok {
			_ = unix.Close(fd)
		}
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	return func() {
		if w, ok := p.take(token); ok {
			p.release(w.fd)
		}
	}, nil
}

// take removes the wait of token; the one who takes it releases its fd.
func (p *exitPoller) take(token uint64) (pidfdWait, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.waits[token]
	delete(p.waits, token)
	return w, ok
}

func (p *exitPoller) release(fd int) {
	_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	_ = unix.Close(fd)
}

// run delivers the ends epoll reports, for the life of the process.
func (p *exitPoller) run() {
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(p.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			p.fail(fmt.Errorf("epoll_wait: %w", err))
			return
		}
		for _, ev := range events[:n] {
			token := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if w, ok := p.take(token); ok {
				p.release(w.fd)
				go w.ended()
			}
		}
	}
}

// fail ends the poller: every wait is delivered as ended, since none can
// be told any more, and later adds return err.
func (p *exitPoller) fail(err error) {
	p.mu.Lock()
	p.broken = err
	waits := p.waits
	p.waits = map[uint64]pidfdWait{}
	p.mu.Unlock()
	for _, w := range waits {
		_ = unix.Close(w.fd)
		go w.ended()
	}
}

// pending is the number of waits in progress.
func (p *exitPoller) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waits)
}
