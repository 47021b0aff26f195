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

// Package instructions writes `tether agent prompt --write`'s block into an
// agent's instructions file (CLAUDE.md, AGENTS.md, GEMINI.md) and takes it
// out again. The block sits between two marker lines,
//
//	<!-- tether:begin HOOK -->
//	...
//	<!-- tether:end -->
//
// A second write replaces it in place; every byte outside it is kept. What
// tether added around the block when it first wrote it (a blank line before
// it, a newline ending the file's last line, the file itself) is named in
// the begin line, so that Remove gives back the file as it was, byte for
// byte, with no record kept anywhere else.
package instructions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// Marker lines.
const (
	beginPrefix = "<!-- tether:begin "
	markerEnd   = " -->"
	// EndLine is the line that closes the block.
	EndLine = "<!-- tether:end -->"
)

// What the first write added before the block, as the begin line's second
// word names it; none is one blank line after a file whose last line ends
// with a newline.
const (
	// addedFile: the file did not exist.
	addedFile = "created"
	// addedNothing: the file existed and was empty.
	addedNothing = "empty"
	// addedNewline: the file's last line had no newline: tether ended it,
	// then a blank line.
	addedNewline = "noeol"
)

// MaxSize bounds the instructions file read.
const MaxSize = 4 << 20

// Block is a tether block found in a file.
type Block struct {
	// Hook is the Hook the block names.
	Hook string
	// Added is what the first write added before it (see the constants).
	Added string
	// Start and End are the byte offsets of the begin line's first byte and
	// of the end line's last byte (before its newline).
	Start, End int
	// Line is the begin line's number, from 1.
	Line int
}

// LineError is a malformed tether block: what is wrong, at which line.
type LineError struct {
	// Line is the line's number, from 1.
	Line int
	// Msg says what is wrong.
	Msg string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// at names path (and the line of a LineError) in err.
func at(path string, err error) error {
	var le *LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %s; nothing changed", path, le.Line, le.Msg)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// Find returns the file's tether block, nil when it has none. A begin line
// without its end line, an end line without a begin line or a second block
// is an error naming the line.
func Find(content []byte) (*Block, error) {
	var b *Block
	closed := false
	off := 0
	for n := 1; off < len(content); n++ {
		end := bytes.IndexByte(content[off:], '\n')
		lineEnd := len(content)
		if end >= 0 {
			lineEnd = off + end
		}
		line := strings.TrimRight(string(content[off:lineEnd]), "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, beginPrefix) && strings.HasSuffix(trimmed, markerEnd):
			if b != nil {
				return nil, &LineError{n, fmt.Sprintf("a second tether block (the first begins at line %d); remove one", b.Line)}
			}
			f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(trimmed, beginPrefix), markerEnd))
			if len(f) == 0 || len(f) > 2 {
				return nil, &LineError{n, "a tether begin line wants " + beginPrefix + "HOOK" + markerEnd}
			}
			b = &Block{Hook: f[0], Start: off, Line: n}
			if len(f) == 2 {
				b.Added = f[1]
			}
		case trimmed == EndLine:
			if b == nil || closed {
				return nil, &LineError{n, EndLine + " without a tether begin line before it"}
			}
			b.End, closed = off+len(line), true
		}
		off = lineEnd + 1
	}
	if b != nil && !closed {
		return nil, &LineError{b.Line, "the tether block has no " + EndLine + " line"}
	}
	return b, nil
}

// render is the block: the marker lines around text, with no newline after
// the end line.
func render(hook, added string, text []byte) []byte {
	var b bytes.Buffer
	b.WriteString(beginPrefix + hook)
	if added != "" {
		b.WriteString(" " + added)
	}
	b.WriteString(markerEnd + "\n")
	b.Write(text)
	if len(text) > 0 && text[len(text)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(EndLine)
	return b.Bytes()
}

// Put returns content with text as hook's block: the existing block
// replaced in place, else the block added at the end (after a blank line).
// existed is false when the file does not exist.
func Put(content []byte, existed bool, hook string, text []byte) ([]byte, error) {
	b, err := Find(content)
	if err != nil {
		return nil, err
	}
	if b != nil {
		out := append([]byte{}, content[:b.Start]...)
		out = append(out, render(hook, b.Added, text)...)
		return append(out, content[b.End:]...), nil
	}
	added, sep := "", "\n"
	switch {
	case !existed:
		added, sep = addedFile, ""
	case len(content) == 0:
		added, sep = addedNothing, ""
	case content[len(content)-1] != '\n':
		added, sep = addedNewline, "\n\n"
	}
	out := append(append([]byte{}, content...), sep...)
	out = append(out, render(hook, added, text)...)
	return append(out, '\n'), nil
}

// Remove returns content without its tether block and what its first write
// added before it; del is true when nothing is left of a file tether
// created. found is false when the file has no block (content is returned
// as it is).
func Remove(content []byte) (out []byte, del, found bool, err error) {
	b, err := Find(content)
	if err != nil || b == nil {
		return content, false, false, err
	}
	end := b.End
	if end < len(content) && content[end] == '\n' {
		end++
	}
	start := b.Start
	before := content[:start]
	switch b.Added {
	case "":
		if bytes.HasSuffix(before, []byte("\n\n")) {
			start--
		}
	case addedNewline:
		if bytes.HasSuffix(before, []byte("\n\n")) {
			start -= 2
		}
	}
	out = append(append([]byte{}, content[:start]...), content[end:]...)
	return out, len(out) == 0 && b.Added == addedFile, true, nil
}

// Result is what Write or Delete did.
type Result struct {
	// Path is the instructions file.
	Path string
	// Changed is false when the file already was as wanted.
	Changed bool
	// Removed is true when Delete removed the file tether had created.
	Removed bool
	// Hook is the Hook of the block Delete found; empty when none.
	Hook string
}

// read reads path, which must be a regular file or missing, never a
// symbolic link.
func read(path string) ([]byte, bool, fs.FileMode, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0o644, nil
	}
	if err != nil {
		return nil, false, 0, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, false, 0, fmt.Errorf("%s is a symbolic link; refusing to write through it", path)
	case !fi.Mode().IsRegular():
		return nil, false, 0, fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > MaxSize:
		return nil, false, 0, fmt.Errorf("%s: larger than %d bytes", path, MaxSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, true, fi.Mode().Perm(), nil
}

// Write puts text as hook's block into the file at path (see Put),
// atomically and durably; a file already as wanted is not written.
func Write(path, hook string, text []byte) (Result, error) {
	res := Result{Path: path}
	content, existed, perm, err := read(path)
	if err != nil {
		return res, err
	}
	out, err := Put(content, existed, hook, text)
	if err != nil {
		return res, at(path, err)
	}
	if existed && bytes.Equal(out, content) {
		return res, nil
	}
	if err := atomicfs.WriteFile(path, out, perm); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// Delete takes the tether block out of the file at path (see Remove),
// atomically and durably, and removes the file when tether created it and
// nothing else is in it. With hook set, another Hook's block is refused.
func Delete(path, hook string) (Result, error) {
	res := Result{Path: path}
	content, existed, perm, err := read(path)
	if err != nil || !existed {
		return res, err
	}
	b, err := Find(content)
	if err != nil {
		return res, at(path, err)
	}
	if b == nil {
		return res, nil
	}
	res.Hook = b.Hook
	if hook != "" && b.Hook != hook {
		return res, fmt.Errorf("%s:%d: the tether block is hook %s's, not %s's; nothing changed", path, b.Line, b.Hook, hook)
	}
	out, del, _, err := Remove(content)
	if err != nil {
		return res, at(path, err)
	}
	if del {
		if err := atomicfs.RemoveDurable(path); err != nil {
			return res, err
		}
		res.Changed, res.Removed = true, true
		return res, nil
	}
	if err := atomicfs.WriteFile(path, out, perm); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}
