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

package claudesettings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tether-dev/tether/internal/atomicfs"
)

// maxRecordSize bounds a record read back: it holds one settings file.
const maxRecordSize = 4 << 20

// record is what an install changed, kept outside the project (in the
// directory Options.RecordDir names) so that uninstall can give the file
// back byte for byte: the bytes before, the bytes tether wrote, and the
// directories it created.
type record struct {
	// Path is the settings file the record is about.
	Path string `json:"path"`
	// Existed is false when install created the file.
	Existed bool `json:"existed"`
	// Before is the file's content before the first install.
	Before []byte `json:"before,omitempty"`
	// Installed is the content the last install wrote.
	Installed []byte `json:"installed"`
	// CreatedDirs are the directories install created, deepest first.
	CreatedDirs []string `json:"createdDirs,omitempty"`
}

func recordPath(dir, settings string) string {
	sum := sha256.Sum256([]byte(settings))
	return filepath.Join(dir, "claude-settings-"+hex.EncodeToString(sum[:8])+".json")
}

// readRecord returns the record of settings, or nil when there is none or it
// cannot be trusted (another file's, or not a record): uninstall then falls
// back to removing tether's entries.
func readRecord(dir, settings string) *record {
	if dir == "" {
		return nil
	}
	p := recordPath(dir, settings)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxRecordSize {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var r record
	if json.Unmarshal(data, &r) != nil || r.Path != settings {
		return nil
	}
	return &r
}

func writeRecord(dir string, r *record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("recording the install: %w", err)
	}
	return atomicfs.WriteFile(recordPath(dir, r.Path), data, 0o600)
}

func dropRecord(dir, settings string) {
	if dir != "" {
		_ = os.Remove(recordPath(dir, settings))
	}
}

// missingDirs lists the directories from dir upward that do not exist,
// deepest first: what MkdirAll will create.
func missingDirs(dir string) []string {
	var out []string
	for {
		if _, err := os.Lstat(dir); err == nil || !errors.Is(err, os.ErrNotExist) {
			return out
		}
		out = append(out, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// restore gives the file back as the record holds it, when the file is still
// exactly what tether wrote: the original bytes, or no file (and none of the
// directories install created, when they are empty).
func restore(r *record, current []byte, dryRun bool, res *Result) error {
	if r == nil || !bytes.Equal(current, r.Installed) {
		return errors.New("the settings file changed while it was being restored")
	}
	res.Changed = true
	if r.Existed {
		res.After = r.Before
		if dryRun {
			return nil
		}
		perm := os.FileMode(0o644)
		if fi, err := os.Stat(res.Path); err == nil {
			perm = fi.Mode().Perm()
		}
		_, err := atomicfs.WriteFileIfChanged(res.Path, r.Before, perm)
		return err
	}
	res.After = nil
	if dryRun {
		return nil
	}
	if err := os.Remove(res.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, d := range r.CreatedDirs {
		// Only an empty directory goes: anything put there since is kept.
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}
