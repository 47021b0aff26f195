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
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// Inspect checks the store in dir without writing to it (no lock, no
// repair, no adoption) and returns every problem it finds, each with its
// path, reason and fix: directories others can write or another user owns,
// symbolic links, FIFOs, devices and other users' files among the entries,
// object files the store quarantines (unreadable, undecodable, or holding
// an edit it refuses), corrupt journal lines, a failed write's entries not
// cut back yet (the void mark) and leftover temp files (those whose
// writer, named by the PID in the name, is gone). A
// store with no problem returns none. A missing dir is an error matching
// ErrNoStore.
func Inspect(ctx context.Context, dir string, opts Options) ([]Problem, error) {
	in, err := InspectAll(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	return in.Problems, nil
}

// Inspection is what InspectAll finds in a store.
type Inspection struct {
	// Problems are the problems Inspect returns.
	Problems []Problem
	// Objects are the objects of the object files that have no problem,
	// in the order of their paths: a file's content, or, for a valid hand
	// edit, the object the store would adopt. Entries with a problem are
	// left out; their last valid version stays in the journal.
	Objects []*unstructured.Unstructured
}

// InspectAll is Inspect that also returns the objects it read, so that a
// caller can check them without opening the store (which takes the write
// lock to remove leftover temp files and adopts hand edits).
func InspectAll(ctx context.Context, dir string, opts Options) (*Inspection, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNoStore, dir)
	} else if err != nil {
		return nil, err
	}
	s, err := newStore(dir, &opts)
	if err != nil {
		return nil, err
	}
	if s.log.GetSink() == nil {
		s.log = logr.Discard()
	}
	s.journal = &journal{path: filepath.Join(dir, journalName), layout: s.layout}
	var out []Problem
	var objs []*unstructured.Unstructured
	if err := checkNotSymlink(dir); err != nil {
		var ee *EntryError
		if errors.As(err, &ee) {
			return &Inspection{Problems: []Problem{problemOf(ee)}}, nil
		}
		return nil, err
	}
	if s.root, err = atomicfs.OpenDir(dir, false); err != nil {
		return nil, err
	}
	defer func() { _ = s.root.Close() }()
	// The walk below finds the symbolic links itself.
	refusals, _, notDirs := s.dirProblems()
	out = append(append(out, refusals...), notDirs...)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			out = append(out, Problem{Path: path, Reason: err.Error(), Fix: "make it readable by you"})
			return nil
		}
		if path == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if strings.HasPrefix(d.Name(), ".tmp-") {
			if writerAlive(d.Name()) {
				// A write in progress (or a live process's pending
				// removal), not a leftover: the store keeps it too.
				return nil
			}
			out = append(out, Problem{Path: path, Reason: "is a temp file left by a writer that was killed", Fix: "rm " + path + " (tether removes it on its next write when its writer is gone)"})
			return nil
		}
		if d.IsDir() {
			if s.isObjectDir(path) {
				return nil
			}
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 && (s.isObjectDir(path) || filepath.Dir(rel) != "." || d.Name() == journalName || d.Name() == lockName) {
			out = append(out, problemOf(symlinkError(path)))
			return nil
		}
		if rel == journalName {
			out = append(out, s.inspectJournal()...)
			return nil
		}
		if rel == lockName && d.Type().IsRegular() {
			out = append(out, inspectVoid(path)...)
			return nil
		}
		if _, _, _, ok := s.keyOfPath(path); ok {
			if obj, p, bad := s.inspectObjectFile(ctx, path); bad {
				out = append(out, p)
			} else if obj != nil {
				objs = append(objs, obj)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Inspection{Problems: out, Objects: objs}, nil
}

// inspectObjectFile reports the problem of one object file, if it has one,
// or else returns its object (for a valid hand edit, the object the store
// would adopt).
func (s *Store) inspectObjectFile(ctx context.Context, path string) (*unstructured.Unstructured, Problem, bool) {
	r, ns, name, _ := s.keyOfPath(path)
	so, err := s.readObjectFile(path)
	var fe *FileError
	switch {
	case errors.As(err, &fe):
		var ee *EntryError
		if errors.As(fe.Err, &ee) {
			return nil, problemOf(ee), true
		}
		return nil, Problem{Path: path, Reason: "holds an edit the store refuses: " + fe.Error(), Fix: "fix or remove the file; the last valid version stays in effect"}, true
	case err != nil:
		return nil, Problem{Path: path, Reason: err.Error(), Fix: "make it readable by you"}, true
	}
	if so.handEdited {
		last, err := s.lastValid(r, ns, name)
		if err != nil {
			return nil, Problem{Path: path, Reason: err.Error(), Fix: "check the journal"}, true
		}
		next, errs := s.prepareAdoption(ctx, r, ns, name, so.obj, last)
		if len(errs) > 0 {
			return nil, Problem{Path: path, Reason: fmt.Sprintf("holds an edit the store refuses: %s:%d: %v", path, s.lineOfField(path, errs[0].Field), errs.ToAggregate()),
				Fix: "fix or remove the file; the last valid version stays in effect"}, true
		}
		if js, err := next.MarshalJSON(); err != nil || len(js) > maxObjectBytes {
			return nil, Problem{Path: path, Reason: fmt.Sprintf("holds an edit the store refuses: the object is %d bytes of JSON; the limit is %d", len(js), maxObjectBytes),
				Fix: "shrink it; the last valid version stays in effect"}, true
		}
		return next, Problem{}, false
	}
	if errs := s.typedErrors(r, so.obj); len(errs) > 0 {
		return nil, Problem{Path: path, Reason: "does not decode: " + errs.ToAggregate().Error(), Fix: "edit the file to a valid value (tether edit), or remove it"}, true
	}
	return so.obj, Problem{}, false
}

// inspectJournal reports the journal's corrupt lines. A torn last line (a
// write killed midway, never acknowledged) is not a problem: the next
// writer truncates it.
func (s *Store) inspectJournal() []Problem {
	f, _, err := s.openRegular(s.journal.path)
	if err != nil {
		var ee *EntryError
		if errors.As(err, &ee) {
			return []Problem{problemOf(ee)}
		}
		return []Problem{{Path: s.journal.path, Reason: err.Error(), Fix: "make it readable by you"}}
	}
	defer func() { _ = f.Close() }()
	var out []Problem
	br := bufio.NewReaderSize(f, 1<<20)
	var offset int64
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var e entry
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				out = append(out, (&corruptLine{offset: offset, err: jerr}).problem(s.journal.path))
			}
		}
		offset += int64(len(line))
		if err != nil {
			return out
		}
	}
}
