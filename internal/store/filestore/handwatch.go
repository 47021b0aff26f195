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
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// ReasonInvalidEdit is the reason of the Warning Event recorded on an
// object whose store file holds a refused hand edit.
const ReasonInvalidEdit = "InvalidEdit"

// ReasonQuarantined is the reason of the Warning Event recorded for a
// store entry the store cannot read (a symbolic link, a FIFO, another
// user's file, a corrupt journal line) and skips.
const ReasonQuarantined = "Quarantined"

// ActionAdoptEdit is the action of the events the hand-edit watcher records.
const ActionAdoptEdit = "AdoptEdit"

// Before it records the Event of a refused edit, the hand-edit watcher
// waits for the file to settle: many editors save by truncating the file
// and writing it again, and a file read between the two (empty, or half
// written) is refused for a reason its person never wrote.
const (
	// settleDelay is how long a refused file must stay unchanged.
	settleDelay = 100 * time.Millisecond
	// settleLimit bounds the wait of a file that keeps changing, or stays
	// empty.
	settleLimit = 2 * time.Second
)

// settling is a refused file the watcher waits on.
type settling struct {
	// data and err are what it last read of the file.
	data       []byte
	err        string
	first, due time.Time
}

// WatchHandEdits watches the store's object directories and adopts hand
// edits as they happen, until ctx ends. It first adopts edits made while
// nothing was watching. On an inotify overflow it scans everything again.
// Refused edits are logged and recorded through rec as Warning Events on
// the object, with file and line, once the file has settled: read twice
// settleDelay apart with the same content (or after settleLimit), and
// judged on that final content.
func (s *Store) WatchHandEdits(ctx context.Context, rec events.EventRecorder) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	hw := &handWatch{s: s, ctx: ctx, w: w, rec: rec,
		refused: map[string]string{}, recorded: map[string]string{}, pending: map[string]*settling{}}
	hw.scan()
	hw.emit()
	var wake *time.Timer
	defer func() {
		if wake != nil {
			wake.Stop()
		}
	}()
	for {
		var woken <-chan time.Time
		if next, ok := hw.nextDue(); ok {
			if wake == nil {
				wake = time.NewTimer(time.Until(next))
			} else {
				wake.Reset(time.Until(next))
			}
			woken = wake.C
		}
		select {
		case <-ctx.Done():
			return nil
		case <-woken:
			hw.judgeSettled()
		case <-s.quarantine.notify:
			hw.emit()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			hw.onEvent(ev)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.log.Info("file notifications lost; scanning the store again", "error", err.Error())
			hw.scan()
		}
	}
}

// handWatch is the state of one WatchHandEdits.
type handWatch struct {
	s   *Store
	ctx context.Context
	w   *fsnotify.Watcher
	rec events.EventRecorder
	// refused counts each refused version of a file once for the metrics.
	refused map[string]string
	// recorded is the message of the last Event recorded about a file.
	recorded map[string]string
	// pending are the refused files waiting to settle.
	pending map[string]*settling
}

func (hw *handWatch) record(regarding runtime.Object, p Problem) {
	reason := ReasonQuarantined
	if _, isObject := regarding.(*unstructured.Unstructured); isObject {
		reason = ReasonInvalidEdit
	}
	msg := p.Reason
	if !strings.HasPrefix(msg, p.Path) {
		msg = p.Path + ": " + msg
	}
	hw.rec.Eventf(regarding, nil, corev1.EventTypeWarning, reason, ActionAdoptEdit, "%s; %s", msg, p.Fix)
}

func (hw *handWatch) forget(path string) {
	delete(hw.refused, path)
	delete(hw.recorded, path)
	hw.s.quarantine.cleared(path)
}

func (hw *handWatch) read(path string) ([]byte, string) {
	data, err := hw.s.readRegular(path)
	if err != nil {
		return nil, err.Error()
	}
	return data, ""
}

func (hw *handWatch) settle(path string) {
	now := time.Now()
	p := hw.pending[path]
	if p == nil {
		p = &settling{first: now}
		hw.pending[path] = p
	}
	p.data, p.err = hw.read(path)
	p.due = now.Add(settleDelay)
}

// judge adopts or refuses a file that has settled, and records the
// Event of a refusal whose message is news.
func (hw *handWatch) judge(path string) {
	s := hw.s
	err := s.adoptFile(hw.ctx, path)
	s.collectOrphans(hw.ctx)
	var inv *InvalidEditError
	switch {
	case errors.As(err, &inv):
		msg := inv.File.Error()
		if hw.refused[path] != msg {
			hw.refused[path] = msg
			s.observeHandEdit(false)
		}
		p, regarding := s.fileProblem(inv.File, inv.Object)
		s.quarantine.report(p, nil)
		if regarding != nil && hw.recorded[path] != msg {
			hw.recorded[path] = msg
			hw.record(regarding, p)
		}
	case err != nil:
		s.quarantine.report(Problem{Path: path, Reason: err.Error(), Fix: "fix the file or the store; the last valid version stays in effect"}, nil)
	default:
		hw.forget(path)
	}
}

func (hw *handWatch) judgeSettled() {
	now := time.Now()
	for path, p := range hw.pending {
		if now.Before(p.due) {
			continue
		}
		data, err := hw.read(path)
		// An empty file is what a save leaves between its truncate and
		// its write, however long a loaded machine keeps the editor
		// from writing: it is judged only at the limit.
		empty := err == "" && len(data) == 0
		if (empty || err != p.err || !bytes.Equal(data, p.data)) && now.Sub(p.first) < settleLimit {
			p.data, p.err, p.due = data, err, now.Add(settleDelay)
			continue
		}
		delete(hw.pending, path)
		hw.judge(path)
	}
}

// nextDue is when the first pending file is due to be judged.
func (hw *handWatch) nextDue() (time.Time, bool) {
	next := time.Time{}
	for _, p := range hw.pending {
		if next.IsZero() || p.due.Before(next) {
			next = p.due
		}
	}
	return next, !next.IsZero()
}

func (hw *handWatch) handle(path string) {
	s := hw.s
	err := s.adoptFile(hw.ctx, path)
	s.collectOrphans(hw.ctx)
	var inv *InvalidEditError
	switch {
	case errors.As(err, &inv):
		hw.settle(path)
	case err != nil:
		s.quarantine.report(Problem{Path: path, Reason: err.Error(), Fix: "fix the file or the store; the last valid version stays in effect"}, nil)
	default:
		delete(hw.pending, path)
		hw.forget(path)
	}
}

// emit makes every report, whoever found the entry (this watcher, a list,
// a watch), one Warning Event; one found in an object file's content once
// the file has settled.
func (hw *handWatch) emit() {
	for _, q := range hw.s.quarantine.takeReports() {
		if q.regarding == nil {
			continue
		}
		if _, _, _, ok := hw.s.keyOfPath(q.problem.Path); ok && q.fromFile {
			hw.settle(q.problem.Path)
			continue
		}
		hw.record(q.regarding, q.problem)
	}
}

func (hw *handWatch) scan() {
	s := hw.s
	stamps := map[string]stampSet{}
	for plural, r := range s.byPlural {
		stamps[plural] = s.loadStamps(r)
	}
	_ = filepath.WalkDir(s.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path == s.dir || s.isObjectDir(path) {
				_ = hw.w.Add(path)
				return nil
			}
			return filepath.SkipDir
		}
		if d.Type()&os.ModeSymlink != 0 && path != s.dir && (s.isObjectDir(path) || filepath.Dir(path) != s.dir) {
			s.quarantine.report(problemOf(symlinkError(path)), nil)
			if _, _, _, ok := s.keyOfPath(path); ok {
				hw.handle(path)
			}
			return nil
		}
		if r, ns, name, ok := s.keyOfPath(path); ok && !s.stamped(stamps[r.plural], ns, name, path) && s.needsAdoption(path) {
			hw.handle(path)
		}
		return nil
	})
}

func (hw *handWatch) onEvent(ev fsnotify.Event) {
	s := hw.s
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() && s.isObjectDir(ev.Name) {
			// A new directory, possibly moved in whole: watch it, then scan it.
			_ = hw.w.Add(ev.Name)
			hw.scan()
			return
		}
	}
	// Most events are the store's own writes (every write renames a file
	// into place): those files need no adoption, which the same check as
	// the scan's tells without the write lock, so the watcher does not
	// stall the store's readers and writers once for each write they make.
	if _, _, _, ok := s.keyOfPath(ev.Name); ok {
		if s.needsAdoption(ev.Name) {
			hw.handle(ev.Name)
		} else {
			// The file is the store's again (an edit undone): a later
			// identical refusal is news.
			delete(hw.pending, ev.Name)
			hw.forget(ev.Name)
		}
	}
}
