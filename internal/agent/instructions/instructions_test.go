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

package instructions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const text = "# tether: task t\n\nRead the recovery file.\n"

func block(hook, added string) string {
	b := beginPrefix + hook
	if added != "" {
		b += " " + added
	}
	return b + markerEnd + "\n" + text + EndLine
}

// TestPutRemove: a write adds the block (or replaces it in place), a second
// write changes nothing, and Remove gives back the bytes before the first
// write, or no file when tether created it.
func TestPutRemove(t *testing.T) {
	tests := []struct {
		name    string
		existed bool
		before  string
		want    string
	}{
		{"no file", false, "", block("t", addedFile) + "\n"},
		{"empty file", true, "", block("t", addedNothing) + "\n"},
		{"after a newline", true, "# Project\n", "# Project\n\n" + block("t", "") + "\n"},
		{"after a blank line", true, "# Project\n\n", "# Project\n\n\n" + block("t", "") + "\n"},
		{"no final newline", true, "# Project", "# Project\n\n" + block("t", addedNewline) + "\n"},
		{"CRLF", true, "# Project\r\n", "# Project\r\n\n" + block("t", "") + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Put([]byte(tt.before), tt.existed, "t", []byte(text))
			if err != nil || string(got) != tt.want {
				t.Fatalf("Put: %q, %v; want %q", got, err, tt.want)
			}
			again, err := Put(got, true, "t", []byte(text))
			if err != nil || string(again) != string(got) {
				t.Fatalf("second Put: %q, %v; want it unchanged", again, err)
			}
			back, del, found, err := Remove(got)
			if err != nil || !found || string(back) != tt.before || del != !tt.existed {
				t.Fatalf("Remove: %q del %v found %v, %v; want %q del %v", back, del, found, err, tt.before, !tt.existed)
			}
		})
	}
}

// TestPutInPlace: an existing block is replaced where it is, whatever its
// Hook, and every byte around it is kept.
func TestPutInPlace(t *testing.T) {
	tests := []struct {
		name, before, want string
	}{
		{"middle", "a\n\n" + block("old", "") + "\n\nb\n", "a\n\n" + block("t", "") + "\n\nb\n"},
		{"indented markers, old text", "x\n  <!-- tether:begin old -->\nstale\n  <!-- tether:end -->  \ny", "x\n" + block("t", "") + "\ny"},
		{"at the end, no newline", "a\n\n" + block("t", addedNewline), "a\n\n" + block("t", addedNewline)},
		{"keeps the first write's word", block("old", addedFile) + "\n", block("t", addedFile) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Put([]byte(tt.before), true, "t", []byte(text))
			if err != nil || string(got) != tt.want {
				t.Fatalf("Put: %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestRemoveKeepsWhatWasAddedSince(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"text after the block", "a\n\n" + block("t", "") + "\nb\n", "a\nb\n"},
		{"blank line removed by hand", "a\n" + block("t", "") + "\n", "a\n"},
		{"no block", "a\n", "a\n"},
		{"created, then text added", block("t", addedFile) + "\nmine\n", "mine\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, del, _, err := Remove([]byte(tt.in))
			if err != nil || del || string(got) != tt.want {
				t.Fatalf("Remove: %q del %v, %v; want %q", got, del, err, tt.want)
			}
		})
	}
}

func TestMalformedBlocks(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"no end", "a\n<!-- tether:begin t -->\nx\n", 2, "has no"},
		{"end alone", "a\n<!-- tether:end -->\n", 2, "without a tether begin line"},
		{"two blocks", block("t", "") + "\n" + block("u", "") + "\n", 6, "a second tether block (the first begins at line 1)"},
		{"two ends", block("t", "") + "\n" + EndLine + "\n", 6, "without a tether begin line"},
		{"three words", "<!-- tether:begin a b c -->\n" + EndLine, 1, "wants"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []func() error{
				func() error { _, err := Put([]byte(tt.in), true, "t", []byte(text)); return err },
				func() error { _, _, _, err := Remove([]byte(tt.in)); return err },
			} {
				var le *LineError
				if err := f(); !errors.As(err, &le) || le.Line != tt.line || !strings.Contains(le.Msg, tt.msg) {
					t.Fatalf("error %v, want line %d: ...%s", err, tt.line, tt.msg)
				}
			}
		})
	}
}

// TestWriteDelete drives the files: created and removed, written once,
// given back byte for byte with its mode, refused through a symbolic link
// or when it is not a file, and a malformed block named with its path and
// line and left alone.
func TestWriteDelete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "AGENTS.md")

	res, err := Write(path, "t", []byte(text))
	if err != nil || !res.Changed {
		t.Fatalf("Write of a new file: %+v, %v", res, err)
	}
	if res, err := Write(path, "t", []byte(text)); err != nil || res.Changed {
		t.Fatalf("second Write: %+v, %v; want unchanged", res, err)
	}
	if _, err := Delete(path, "other"); err == nil || !strings.Contains(err.Error(), "hook t's, not other's") {
		t.Fatalf("Delete of another Hook's block: %v", err)
	}
	if res, err := Delete(path, "t"); err != nil || !res.Removed || res.Hook != "t" {
		t.Fatalf("Delete: %+v, %v", res, err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the file tether created is still there: %v", err)
	}
	if res, err := Delete(path, "t"); err != nil || res.Changed {
		t.Fatalf("Delete of a missing file: %+v, %v", res, err)
	}

	orig := "# Rules\n\nBe brief."
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(path, "t", []byte(text)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after Write: %v, %v", fi.Mode(), err)
	}
	if _, err := Delete(path, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != orig {
		t.Fatalf("after Delete %q, want %q", got, orig)
	}

	bad := "a\n<!-- tether:begin t -->\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{
		func() error { _, err := Write(path, "t", []byte(text)); return err },
		func() error { _, err := Delete(path, "t"); return err },
	} {
		if err := f(); err == nil || !strings.HasPrefix(err.Error(), path+":2: ") {
			t.Fatalf("malformed block: %v, want %s:2: ...", err, path)
		}
		if got, _ := os.ReadFile(path); string(got) != bad {
			t.Fatalf("a malformed file was changed: %q", got)
		}
	}

	target := filepath.Join(dir, "real.md")
	if err := os.WriteFile(target, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "CLAUDE.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "GEMINI.md")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{link: "symbolic link", sub: "not a regular file"} {
		if _, err := Write(p, "t", []byte(text)); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("Write %s: %v, want %q", p, err, want)
		}
		if _, err := Delete(p, "t"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Delete %s: %v, want %q", p, err, want)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "x\n" {
		t.Fatalf("written through the link: %q", got)
	}
}
