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

package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

// StdinName is the source name of manifests read from standard input.
const StdinName = "STDIN"

// Source is one manifest file's name and content.
type Source struct {
	// Name is the path as given, or StdinName.
	Name string
	// Data is the file's bytes.
	Data []byte
}

// IsManifest reports whether a file name has a manifest extension, the ones
// kubectl reads from a directory.
func IsManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Read reads the manifests that -f arguments name: files, directories (their
// manifest files, and with recursive those of subdirectories too) and "-"
// for stdin. Files in a directory come in lexical order. It only reads.
func Read(paths []string, recursive bool, stdin io.Reader) ([]Source, error) {
	var out []Source
	for _, p := range paths {
		if p == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading stdin: %w", err)
			}
			out = append(out, Source{Name: StdinName, Data: data})
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("the path %q does not exist", p)
		}
		if !fi.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, Source{Name: p, Data: data})
			continue
		}
		var files []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && !recursive {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && IsManifest(path) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("error reading %q: no manifest files (.yaml, .yml, .json) found", p)
		}
		slices.Sort(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, Source{Name: f, Data: data})
		}
	}
	return out, nil
}

// Error is a failure to apply one document, located in its file.
type Error struct {
	// Source is the file name; empty when Err already says where.
	Source string
	// Line is the one-based line where the document starts.
	Line int
	// Index is the zero-based document index.
	Index int
	// Err is the underlying error.
	Err error
	// NothingApplied is true when the error stopped the whole file.
	NothingApplied string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		fmt.Fprintf(&b, " (document %d): ", e.Index+1)
	}
	b.WriteString(e.Err.Error())
	if e.NothingApplied != "" {
		fmt.Fprintf(&b, "; nothing from %s was applied", e.NothingApplied)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Outcome is what happened to one document of a file.
type Outcome struct {
	// Doc is the decoded document.
	Doc manifest.Document
	// Object is the object as applied (or as it would be); when Err is
	// set, the configuration that failed to apply.
	Object *unstructured.Unstructured
	// Result says what the apply did; empty when Err is set.
	Result Result
	// Err is the document's error, an *Error.
	Err error
}

// Objects decodes a source strictly and returns the objects its documents
// configure. A bad document fails the whole source with an *Error.
func (a *Applier) Objects(src Source, scheme *runtime.Scheme, opts Options) ([]manifest.Document, []*unstructured.Unstructured, error) {
	docs, err := manifest.Decode(src.Name, src.Data, scheme)
	if err != nil {
		return nil, nil, &Error{Err: err, NothingApplied: src.Name}
	}
	objs := make([]*unstructured.Unstructured, len(docs))
	for i, d := range docs {
		if objs[i], err = a.Object(d, opts); err != nil {
			line := d.Line
			var ferr *FieldError
			if errors.As(err, &ferr) {
				line = d.FieldLine(ferr.Field)
			}
			return nil, nil, &Error{Source: src.Name, Line: line, Index: d.Index, Err: err, NothingApplied: src.Name}
		}
	}
	return docs, objs, nil
}

// ApplyFile applies every document of a source. The whole file is checked
// first, by decoding it strictly and, when it holds several documents, by a
// server-side dry run of each, so one bad document applies nothing; the
// returned error is then that document's *Error. Otherwise each document's
// own outcome is in the slice.
func (a *Applier) ApplyFile(ctx context.Context, src Source, scheme *runtime.Scheme, opts Options) ([]Outcome, error) {
	docs, objs, err := a.Objects(src, scheme, opts)
	if err != nil {
		return nil, err
	}
	if len(objs) > 1 && opts.DryRun == DryRunNone {
		check := opts
		check.DryRun = DryRunServer
		for i, obj := range objs {
			if _, _, err := a.Apply(ctx, obj.DeepCopy(), check); err != nil {
				return nil, &Error{Source: src.Name, Line: errorLine(docs[i], err), Index: docs[i].Index, Err: err, NothingApplied: src.Name}
			}
		}
	}
	out := make([]Outcome, len(objs))
	for i, obj := range objs {
		res, live, err := a.Apply(ctx, obj, opts)
		out[i] = Outcome{Doc: docs[i], Object: live, Result: res}
		if err != nil {
			out[i].Object = obj
			out[i].Err = &Error{Source: src.Name, Line: errorLine(docs[i], err), Index: docs[i].Index, Err: err}
		}
	}
	return out, nil
}

// errorLine is the line of the first field an API error names, else the
// line where the document starts.
func errorLine(doc manifest.Document, err error) int {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if d := status.Status().Details; d != nil {
			for _, c := range d.Causes {
				if c.Field != "" {
					return doc.FieldLine(c.Field)
				}
			}
		}
	}
	return doc.Line
}
