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

package atomicfs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrLocked is returned by TryLock when another open file description
// holds a conflicting lock.
var ErrLocked = errors.New("locked by another holder")

// LockMode is the kind of flock taken.
type LockMode int

const (
	// Shared is a reader's lock: any number of holders at once, none while
	// an Exclusive lock is held.
	Shared LockMode = iota
	// Exclusive is a writer's lock: one holder, and no Shared holders.
	Exclusive
)

// The lock contract, for Lock, TryLock and Unlock:
//
//   - The lock is an advisory flock(2) lock held by the open file
//     description: two opens of the same path, even in one process, are two
//     holders and exclude each other. Goroutines sharing one *os.File share
//     its lock, so order them with a mutex as well.
//   - It works across processes, and the kernel releases it when the last
//     descriptor of the open file description is closed, including when the
//     holder dies by SIGKILL: a lock is never left behind by a crash.
//   - Taking a lock on a file that already holds one converts it (shared to
//     exclusive or back); the conversion is not atomic.
//   - It is not honoured over some network filesystems; a store lives on a
//     local one.

// Lock waits for, and takes, a lock of mode on f. An interrupted wait
// (EINTR) is retried.
func Lock(f *os.File, mode LockMode) error {
	for {
		err := unix.Flock(int(f.Fd()), mode.how())
		if err == nil {
			return nil
		}
		if err != unix.EINTR {
			return fmt.Errorf("locking %s: %w", f.Name(), err)
		}
	}
}

// TryLock takes a lock of mode on f without waiting. When another holder
// has a conflicting lock it returns an error matching ErrLocked.
func TryLock(f *os.File, mode LockMode) error {
	for {
		err := unix.Flock(int(f.Fd()), mode.how()|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == unix.EWOULDBLOCK:
			return fmt.Errorf("locking %s: %w", f.Name(), ErrLocked)
		case err != unix.EINTR:
			return fmt.Errorf("locking %s: %w", f.Name(), err)
		}
	}
}

// Unlock releases f's lock. Closing f releases it as well.
func Unlock(f *os.File) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_UN); err != nil {
		return fmt.Errorf("unlocking %s: %w", f.Name(), err)
	}
	return nil
}

func (m LockMode) how() int {
	if m == Exclusive {
		return unix.LOCK_EX
	}
	return unix.LOCK_SH
}
