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

// Package doctor checks a local store and its surroundings without
// changing anything, for `tether doctor`: the store's entries (through the
// store's read-only inspection, which the composition root passes in as
// an Inspect), the receipt master key, the history and receipts
// of every Hook, and the process identity of every Worker of this host.
// Each problem is a Finding with the check that found it, where it is,
// what is wrong and how to fix it.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// The checks, as named in each Finding.
const (
	// CheckPermissions is a store directory that others can write or
	// another user owns.
	CheckPermissions = "permissions"
	// CheckEntries is a symbolic link, FIFO, socket or device in the store.
	CheckEntries = "entries"
	// CheckQuarantine is an object file the store quarantines.
	CheckQuarantine = "quarantine"
	// CheckJournal is a corrupt journal line, or a journal the store cannot read.
	CheckJournal = "journal"
	// CheckTempFiles is a temp file left by a writer that was killed.
	CheckTempFiles = "temp-files"
	// CheckReceiptKey is the receipt master key: its permissions, its
	// absence when receipts need it, or a key that does not load.
	CheckReceiptKey = "receipt-key"
	// CheckHistory is a Hook whose status disagrees with the replay of its
	// history.
	CheckHistory = "history"
	// CheckReceipts is a Hook whose receipts do not support its status.
	CheckReceipts = "receipts"
	// CheckWorkers is a Worker of this host whose recorded process is gone.
	CheckWorkers = "workers"
)

// ErrNotAStore is a store path that is a file, not a directory.
var ErrNotAStore = errors.New("not a store directory")

// Severity says how bad a Finding is. Both make `tether doctor` fail.
type Severity string

const (
	// Error is a problem that stops or falsifies something: a store tether
	// refuses to serve, an object it skips, evidence that does not hold.
	Error Severity = "error"
	// Warning is a problem that costs nothing yet: a leftover temp file, a
	// skipped journal line.
	Warning Severity = "warning"
)

// Finding is one problem.
type Finding struct {
	// Check is the check that found it, one of the Check constants.
	Check string `json:"check"`
	// Severity is Error or Warning.
	Severity Severity `json:"severity"`
	// Path is the file or directory, when the problem is one.
	Path string `json:"path,omitempty"`
	// Object is the object, as kind/namespace/name, when the problem is one.
	Object string `json:"object,omitempty"`
	// Reason says what is wrong.
	Reason string `json:"reason"`
	// Fix says what a person can do about it.
	Fix string `json:"fix"`
}

// Where is the Finding's path, or else its object.
func (f Finding) Where() string {
	if f.Path != "" {
		return f.Path
	}
	return f.Object
}

// String is the Finding in one line: `CHECK WHERE: REASON; fix: FIX`.
func (f Finding) String() string {
	return fmt.Sprintf("%s %s: %s; fix: %s", f.Check, f.Where(), f.Reason, f.Fix)
}

// Problem is a problem of a store's entries, as the store's inspection
// (filestore.Inspect) reports it.
type Problem struct {
	// Path is the file or directory.
	Path string
	// Reason says what is wrong.
	Reason string
	// Fix says what a person can do about it.
	Fix string
}

// Inspect reads the store in dir without writing to it, taking no lock
// and repairing nothing, and returns the problems of its entries and the
// objects of the files that have none (filestore.InspectAll). A missing
// store is an error.
type Inspect func(ctx context.Context, dir string) ([]Problem, []*unstructured.Unstructured, error)

// Options say what to check.
type Options struct {
	// Dir is the store directory. It must exist: Run never creates it.
	Dir string
	// Inspect reads the store; it is required.
	Inspect Inspect
	// KeyDir is the receipt key directory ($TETHER_HOME/keys by default);
	// empty skips the key check and checks receipts without signatures.
	KeyDir string
	// Host is this machine's host name, as the Worker reconciler records
	// it in status.host; empty means os.Hostname.
	Host string
}

// Run checks everything and returns the findings, in the order of the
// checks: the store's entries, the receipt key, then every Hook's history
// and receipts, then every Worker. It writes nothing, takes no lock and
// repairs nothing. A missing store is the error of opts.Inspect; a store
// path that is a file is ErrNotAStore.
func Run(ctx context.Context, opts Options) ([]Finding, error) {
	if fi, err := os.Lstat(opts.Dir); err == nil && fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is a file", ErrNotAStore, opts.Dir)
	}
	problems, objs, err := opts.Inspect(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	out := StoreFindings(opts.Dir, problems)
	hooks, workers, err := typed(objs)
	if err != nil {
		return nil, err
	}
	var km *receipts.FileKeyManager
	if opts.KeyDir != "" {
		km = &receipts.FileKeyManager{Dir: opts.KeyDir}
	}
	out = append(out, CheckKey(ctx, km, hooks)...)
	for _, h := range hooks {
		out = append(out, CheckHookHistory(h)...)
	}
	for _, h := range hooks {
		out = append(out, CheckHookReceipts(ctx, h, km)...)
	}
	host := opts.Host
	if host == "" {
		if host, err = os.Hostname(); err != nil {
			return nil, fmt.Errorf("finding this host's name: %w", err)
		}
	}
	boot, err := supervise.BootID()
	if err != nil {
		return nil, fmt.Errorf("reading this machine's boot ID: %w", err)
	}
	for _, w := range workers {
		out = append(out, CheckWorker(w, host, boot)...)
	}
	return out, nil
}

// typed converts the Hooks and Workers among objs to their Go types,
// sorted by namespace and name.
func typed(objs []*unstructured.Unstructured) ([]*v1.Hook, []*v1.Worker, error) {
	var hooks []*v1.Hook
	var workers []*v1.Worker
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if gvk.GroupVersion() != v1.GroupVersion {
			continue
		}
		var obj runtime.Object
		switch gvk.Kind {
		case "Hook":
			h := &v1.Hook{}
			hooks, obj = append(hooks, h), h
		case "Worker":
			w := &v1.Worker{}
			workers, obj = append(workers, w), w
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return nil, nil, fmt.Errorf("decoding %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
	}
	sort.SliceStable(hooks, func(i, j int) bool {
		return key(hooks[i].Namespace, hooks[i].Name) < key(hooks[j].Namespace, hooks[j].Name)
	})
	sort.SliceStable(workers, func(i, j int) bool {
		return key(workers[i].Namespace, workers[i].Name) < key(workers[j].Namespace, workers[j].Name)
	})
	return hooks, workers, nil
}

func key(ns, name string) string { return ns + "/" + name }

// StoreFindings classifies the problems the inspection found in the
// store at dir by what they are about, looking at each path without
// following it: a temp file, the journal or lock file, a directory, a
// symbolic link or other non-regular entry, or an object file.
func StoreFindings(dir string, problems []Problem) []Finding {
	var out []Finding
	for _, p := range problems {
		f := Finding{Check: CheckQuarantine, Severity: Error, Path: p.Path, Reason: p.Reason, Fix: p.Fix}
		rel, _ := filepath.Rel(dir, p.Path)
		fi, err := os.Lstat(p.Path)
		switch {
		case strings.HasPrefix(filepath.Base(p.Path), ".tmp-"):
			f.Check, f.Severity = CheckTempFiles, Warning
		case err == nil && fi.Mode()&fs.ModeType != 0 && !fi.IsDir(),
			err == nil && fi.Mode().IsRegular() && strings.HasSuffix(p.Reason, "where the store keeps a directory"):
			f.Check = CheckEntries
		case rel == "journal" || rel == ".lock":
			f.Check = CheckJournal
			if strings.Contains(p.Reason, "is corrupt") {
				f.Severity = Warning
			}
		case err == nil && fi.IsDir():
			f.Check = CheckPermissions
		}
		out = append(out, f)
	}
	return out
}

// CheckKey checks the receipt master key of km as every use of it does
// (receipts.FileKeyManager.CheckPerms) and that it loads. A missing key is
// a problem only when some Hook has a signed receipt, whose signature it
// is needed to check. A nil km checks nothing.
func CheckKey(ctx context.Context, km *receipts.FileKeyManager, hooks []*v1.Hook) []Finding {
	if km == nil {
		return nil
	}
	err := km.CheckPerms()
	if err == nil {
		// Deriving a task key loads the master key, as every use does.
		_, err = km.PublicKey(ctx, &v1.Hook{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "doctor", UID: "doctor"}})
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, receipts.ErrNoKey):
		signed := signedHooks(hooks)
		if len(signed) == 0 {
			return nil
		}
		return []Finding{{Check: CheckReceiptKey, Severity: Warning, Path: km.Path(),
			Reason: fmt.Sprintf("there is no master key, so the signatures of the receipts of %s cannot be checked", strings.Join(signed, ", ")),
			Fix:    "restore the key from a backup into " + km.Path() + " (mode 0600, directory 0700); a new key would not verify the receipts already signed"}}
	}
	return []Finding{{Check: CheckReceiptKey, Severity: Error, Path: km.Path(), Reason: err.Error(),
		Fix: fmt.Sprintf("chmod 700 %s && chmod 600 %s; the key must be a plain file only you can read, holding %d hex digits", km.Dir, km.Path(), 64)}}
}

// signedHooks names the Hooks with at least one signed receipt.
func signedHooks(hooks []*v1.Hook) []string {
	var out []string
	for _, h := range hooks {
	steps:
		for i := range h.Status.Steps {
			for j := range h.Status.Steps[i].Receipts {
				if h.Status.Steps[i].Receipts[j].Envelope != nil {
					out = append(out, "hook "+key(h.Namespace, h.Name))
					break steps
				}
			}
		}
	}
	return out
}

// object names a Hook or Worker in a Finding.
func object(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// nsFlag is the -n flag a fix needs for namespace ns.
func nsFlag(ns string) string {
	if ns == "default" {
		return ""
	}
	return " -n " + ns
}

// CheckHookHistory checks hook's status against the replay of its history
// (hookfsm.CheckHistory, as the Hook reconciler does for its
// HistoryConsistent condition) and returns one Finding naming every
// disagreement.
func CheckHookHistory(hook *v1.Hook) []Finding {
	ds := hookfsm.CheckHistory(hook)
	if len(ds) == 0 {
		return nil
	}
	f := Finding{Check: CheckHistory, Severity: Error, Object: object("hook", hook.Namespace, hook.Name),
		Reason: "the status disagrees with the replay of status.history: " + hookfsm.Summary(ds)}
	name := hook.Name + nsFlag(hook.Namespace)
	if _, _, err := hookfsm.Rebuild(hook); err != nil {
		f.Fix = fmt.Sprintf("the history itself is damaged, so tether repair cannot rebuild the status from it: see tether describe hook %s; do not trust either, and give the Hook up (tether fail %s --reason ...) or restore its file from a backup", name, name)
		return []Finding{f}
	}
	f.Fix = fmt.Sprintf("the status was changed outside the state machine (a hand edit?), and tether refuses every transition of the Hook until it agrees: see tether describe hook %s, check the work, then run tether repair %s to rebuild the status from the history", name, name)
	return []Finding{f}
}

// CheckHookReceipts checks hook's whole claim against its receipts
// (receipts.CheckHook, as `tether receipts verify` does) with km's key, or
// without signatures when km is nil or has no usable key (CheckKey reports
// that), and returns one Finding per failure.
func CheckHookReceipts(ctx context.Context, hook *v1.Hook, km *receipts.FileKeyManager) []Finding {
	var rep *receipts.Report
	if km == nil {
		rep = receipts.Check(hook, nil, receipts.ErrNoKey)
	} else {
		rep = receipts.CheckHook(ctx, hook, km)
	}
	var out []Finding
	for _, f := range rep.Failures() {
		out = append(out, Finding{Check: CheckReceipts, Severity: Error, Object: object("hook", hook.Namespace, hook.Name),
			Reason: "the receipts do not support the status: " + f.Error(),
			Fix: fmt.Sprintf("see tether receipts verify %s%s; do not trust the step's result: have the agent run the step again, or tether fail %s%s --reason ...",
				hook.Name, nsFlag(hook.Namespace), hook.Name, nsFlag(hook.Namespace))})
	}
	return out
}

// CheckWorker checks that the process worker's status records (PID,
// start time and boot, the supervise.Identity the Worker reconciler
// follows) still runs, when it runs on host (status.host, or no host
// recorded) and boot is this machine's boot ID. A Worker of another host
// is judged by its heartbeat there, not here.
func CheckWorker(w *v1.Worker, host, boot string) []Finding {
	st := &w.Status
	if st.PID == 0 || (st.Host != "" && st.Host != host) {
		return nil
	}
	id := supervise.Identity{PID: int(st.PID), StartTicks: st.ProcessStartTicks, BootID: st.BootID}
	var reason string
	switch current, err := supervise.Identify(id.PID); {
	case id.BootID != boot:
		reason = fmt.Sprintf("records %s from boot %s, but this machine has since restarted (boot %s): the process is gone", id, orNone(id.BootID), boot)
	case errors.Is(err, supervise.ErrNotRunning):
		reason = fmt.Sprintf("records %s, which no longer runs", id)
	case err != nil:
		reason = fmt.Sprintf("records %s, which cannot be checked: %v", id, err)
	case current != id:
		reason = fmt.Sprintf("records %s, but pid %d is now another process (start %d): the Worker's process is gone and its PID reused", id, id.PID, current.StartTicks)
	default:
		return nil
	}
	fix := fmt.Sprintf("start tether run, which records the exit and restarts the Worker by its restart policy; or tether worker restart %s%s", w.Name, nsFlag(w.Namespace))
	if w.Spec.Adopt != nil {
		fix = fmt.Sprintf("the adopted process is gone: start tether run to record it, or tether delete worker %s%s", w.Name, nsFlag(w.Namespace))
	}
	return []Finding{{Check: CheckWorkers, Severity: Error, Object: object("worker", w.Namespace, w.Name), Reason: reason, Fix: fix}}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
