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
	"io"
	"os"
	"syscall"
)

// ErrSymlink refuses a path whose last element is a symbolic link: files
// the disk may hold edited, replaced or planted are read only as they are.
var ErrSymlink = errors.New("is a symbolic link; refusing to follow it")

// OpenRegular opens the regular file at path for reading, never following
// a symbolic link in its last element (ErrSymlink) and never blocking on a
// FIFO or a device; anything but a regular file is an error naming its
// type. Those refusals do not repeat path, which the caller names; errors of
// the open itself do, as os's. The caller closes the file.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, ErrSymlink
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	return f, nil
}

// ReadRegular reads the regular file at path as OpenRegular opens it, at
// most limit bytes: a larger file is an error, never a silent truncation.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}
