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
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxFileBytes bounds what the store reads of one object file. An object
// is limited to maxObjectBytes of JSON; its YAML is about as long, and a
// file beyond twice that cannot hold a valid object, so it is refused
// unread rather than loaded into memory.
const maxFileBytes = 2 * maxObjectBytes

// EntryError is a store entry the store refuses to read: a symbolic link,
// a FIFO, a device, a directory where a file belongs, a file owned by
// another user or one too large to be an object. It names the path, the
// reason and the fix.
type EntryError struct {
	// Path is the entry.
	Path string
	// Reason says what is wrong with it.
	Reason string
	// Fix says what a person can do about it.
	Fix string
}

func (e *EntryError) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Path, e.Reason, e.Fix) }

// checkNotSymlink refuses a path that is a symbolic link, so that no store
// entry can point outside the store directory.
func checkNotSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return symlinkError(path)
	}
	return nil
}

func symlinkError(path string) *EntryError {
	return &EntryError{Path: path, Reason: "is a symbolic link; the store refuses symlinked entries", Fix: "replace it by a regular file or remove it: rm " + path}
}

// kindOf names a file type for a message.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode.IsDir():
		return "a directory"
	case mode.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// ownerOf returns the uid owning the file fi describes.
func ownerOf(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// checkRegular refuses, with an *EntryError, an entry that is not a regular
// file owned by this process's user and small enough to hold an object.
func checkRegular(path string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &EntryError{Path: path, Reason: "is " + kindOf(fi.Mode()) + ", not a regular file", Fix: "remove it: rm " + path}
	}
	if uid, ok := ownerOf(fi); ok && int(uid) != os.Geteuid() {
		return &EntryError{Path: path, Reason: fmt.Sprintf("is owned by uid %d, not by uid %d who runs tether; another user's file in the store could run commands as you", uid, os.Geteuid()),
			Fix: "check its content, then: chown " + fmt.Sprint(os.Geteuid()) + " " + path + ", or remove it"}
	}
	if fi.Size() > maxFileBytes {
		return &EntryError{Path: path, Reason: fmt.Sprintf("is %d bytes, beyond what an object of at most %d bytes can take", fi.Size(), maxObjectBytes), Fix: "shrink it or remove it"}
	}
	return nil
}

// openRegular opens a store file for reading without following a symbolic
// link and without blocking on a FIFO or a device, and refuses, with an
// *EntryError, what checkRegular refuses. The type is checked on the open
// file, so it cannot change between the check and the read.
func (s *Store) openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := s.openBeneath(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(path, fi)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readRegular reads a store file as openRegular opens it.
func (s *Store) readRegular(path string) ([]byte, error) {
	f, fi, err := s.openRegular(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return readAllSized(f, fi)
}

// readAllSized reads f, whose stat is fi, to its end, at most maxFileBytes.
func readAllSized(f *os.File, fi os.FileInfo) ([]byte, error) {
	buf := make([]byte, 0, fi.Size()+512)
	data, err := readAllLimited(f, buf, maxFileBytes+1)
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, &EntryError{Path: f.Name(), Reason: fmt.Sprintf("grew beyond %d bytes while read", maxFileBytes), Fix: "shrink it or remove it"}
	}
	return data, nil
}

func readAllLimited(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	lr := io.LimitReader(r, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
