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

package doctor_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/config/crd"
	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/doctor"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/scheme"
	"github.com/tether-dev/tether/internal/store/filestore"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/worker/supervise"
)

// storeOptions are the options doctor reads a store with.
func storeOptions(t *testing.T) filestore.Options {
	t.Helper()
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.Load()
	if err != nil {
		t.Fatal(err)
	}
	return filestore.Options{Scheme: s, CRDs: crds, Log: logr.Discard()}
}

// hook is a Hook of one step with one validate command and a status that
// agrees with its (empty) history.
func hook(name string) *v1.Hook {
	return &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.HookSpec{Goal: "g", Steps: []v1.Step{{Name: "vet",
			Validate: []v1.ValidationCommand{{Command: []string{"go", "vet", "./..."}}}}}},
	}
}

// newStore creates a store holding objs, closes it, and returns its
// directory.
func newStore(t *testing.T, objs ...*v1.Hook) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := testsupport.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := s.Client().Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// inspect is the store's read-only inspection, as the CLI passes it.
func inspect(t *testing.T) doctor.Inspect {
	opts := storeOptions(t)
	return func(ctx context.Context, dir string) ([]doctor.Problem, []*unstructured.Unstructured, error) {
		in, err := filestore.InspectAll(ctx, dir, opts)
		if err != nil {
			return nil, nil, err
		}
		var problems []doctor.Problem
		for _, p := range in.Problems {
			problems = append(problems, doctor.Problem{Path: p.Path, Reason: p.Reason, Fix: p.Fix})
		}
		return problems, in.Objects, nil
	}
}

func runDoctor(t *testing.T, dir string) []doctor.Finding {
	t.Helper()
	got, err := doctor.Run(context.Background(), doctor.Options{Dir: dir, Inspect: inspect(t), KeyDir: filepath.Join(t.TempDir(), "keys"), Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func assertFindings(t *testing.T, got, want []doctor.Finding) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings:\n got %#v\nwant %#v", got, want)
	}
}

// TestStoreChecks breaks a store in one way per case and checks the one
// finding doctor reports for it; the healthy store has none.
func TestStoreChecks(t *testing.T) {
	cases := []struct {
		name   string
		root   bool
		break_ func(t *testing.T, dir string) []doctor.Finding
	}{
		{"healthy", false, func(*testing.T, string) []doctor.Finding { return nil }},
		{"directory writable by others", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "default")
			if err := os.Chmod(p, 0o757); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{{Check: doctor.CheckPermissions, Severity: doctor.Error, Path: p,
				Reason: "has mode 0757, which lets group or others write it; refusing to serve it, as a Worker in the store is a command tether runs",
				Fix:    "chmod 700 " + p}}
		}},
		{"directory owned by another user", true, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks")
			if err := os.Lchown(p, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{{Check: doctor.CheckPermissions, Severity: doctor.Error, Path: p,
				Reason: fmt.Sprintf("is owned by uid 4242, not by uid %d who runs tether; refusing to serve a store another user controls", os.Geteuid()),
				Fix:    fmt.Sprintf("chown -R %d %s, after checking its content", os.Geteuid(), p)}}
		}},
		{"symbolic link", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "default", "b.yaml")
			if err := os.Symlink(filepath.Join(dir, "hooks", "default", "a.yaml"), p); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{{Check: doctor.CheckEntries, Severity: doctor.Error, Path: p,
				Reason: "is a symbolic link; the store refuses symlinked entries",
				Fix:    "replace it by a regular file or remove it: rm " + p}}
		}},
		{"FIFO", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "default", "b.yaml")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{{Check: doctor.CheckEntries, Severity: doctor.Error, Path: p,
				Reason: "is a FIFO, not a regular file", Fix: "remove it: rm " + p}}
		}},
		{"FIFO where a namespace directory belongs", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "ns2")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{{Check: doctor.CheckEntries, Severity: doctor.Error, Path: p,
				Reason: "is a FIFO where the store keeps a directory", Fix: "remove it: rm " + p}}
		}},
		{"regular file where a namespace directory belongs", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "ns2")
			write(t, p, "x\n")
			return []doctor.Finding{{Check: doctor.CheckEntries, Severity: doctor.Error, Path: p,
				Reason: "is a regular file where the store keeps a directory", Fix: "remove it: rm " + p}}
		}},
		{"quarantined object file", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "default", "b.yaml")
			write(t, p, "not: [valid\n")
			return []doctor.Finding{{Check: doctor.CheckQuarantine, Severity: doctor.Error, Path: p,
				Reason: "holds an edit the store refuses: " + p + ":1: yaml: did not find expected ',' or ']'",
				Fix:    "fix or remove the file; the last valid version stays in effect"}}
		}},
		{"another user's object file", true, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "default", "a.yaml")
			if err := os.Lchown(p, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{{Check: doctor.CheckQuarantine, Severity: doctor.Error, Path: p,
				Reason: fmt.Sprintf("is owned by uid 4242, not by uid %d who runs tether; another user's file in the store could run commands as you", os.Geteuid()),
				Fix:    fmt.Sprintf("check its content, then: chown %d %s, or remove it", os.Geteuid(), p)}}
		}},
		{"corrupt journal line", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "journal")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("{\"bad\n"); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			return []doctor.Finding{{Check: doctor.CheckJournal, Severity: doctor.Warning, Path: p,
				Reason: fmt.Sprintf("the line at byte %d is corrupt (invalid character '\\n' in string literal); it is skipped, and watches that may have missed it start over from a new list", fi.Size()),
				Fix:    "nothing to do: the object files hold every object; compaction drops the line"}}
		}},
		{"leftover temp file", false, func(t *testing.T, dir string) []doctor.Finding {
			p := filepath.Join(dir, "hooks", "default", ".tmp-a.yaml-999999999-xyz")
			write(t, p, "old")
			return []doctor.Finding{{Check: doctor.CheckTempFiles, Severity: doctor.Warning, Path: p,
				Reason: "is a temp file left by a writer that was killed",
				Fix:    "rm " + p + " (tether removes it on its next write when its writer is gone)"}}
		}},
		{"temp file of a writer that is alive", false, func(t *testing.T, dir string) []doctor.Finding {
			write(t, filepath.Join(dir, "hooks", "default", fmt.Sprintf(".tmp-a.yaml-%d-xyz", os.Getpid())), "new")
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				t.Skip("changing a file's owner takes root")
			}
			dir := newStore(t, hook("a"))
			want := c.break_(t, dir)
			assertFindings(t, runDoctor(t, dir), want)
		})
	}
}

// TestCheckKey checks the receipt master key: missing (a problem only when
// a receipt is signed), open to others, of the wrong kind, unreadable as a
// key, and healthy.
func TestCheckKey(t *testing.T) {
	signed := hook("s")
	signed.Status.Steps = []v1.StepResult{{Name: "vet", Receipts: []v1.Receipt{{Command: []string{"true"}, Envelope: &v1.Envelope{}}}}}
	cases := []struct {
		name  string
		hooks []*v1.Hook
		setup func(t *testing.T, km *receipts.FileKeyManager) []doctor.Finding
	}{
		{"healthy key", []*v1.Hook{signed}, func(t *testing.T, km *receipts.FileKeyManager) []doctor.Finding {
			createKey(t, km)
			return nil
		}},
		{"no key, nothing signed", []*v1.Hook{hook("a")}, func(*testing.T, *receipts.FileKeyManager) []doctor.Finding { return nil }},
		{"no key, a signed receipt", []*v1.Hook{hook("a"), signed}, func(_ *testing.T, km *receipts.FileKeyManager) []doctor.Finding {
			return []doctor.Finding{{Check: doctor.CheckReceiptKey, Severity: doctor.Warning, Path: km.Path(),
				Reason: "there is no master key, so the signatures of the receipts of hook default/s cannot be checked",
				Fix:    "restore the key from a backup into " + km.Path() + " (mode 0600, directory 0700); a new key would not verify the receipts already signed"}}
		}},
		{"key readable by others", nil, func(t *testing.T, km *receipts.FileKeyManager) []doctor.Finding {
			createKey(t, km)
			if err := os.Chmod(km.Path(), 0o644); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{keyFinding(km, fmt.Sprintf("master key %s has mode 0644, which lets group or others access it; refusing to use it (run: chmod 0600 %s)", km.Path(), km.Path()))}
		}},
		{"key directory open to others", nil, func(t *testing.T, km *receipts.FileKeyManager) []doctor.Finding {
			createKey(t, km)
			if err := os.Chmod(km.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{keyFinding(km, fmt.Sprintf("key directory %s has mode 0755, which lets group or others access it; refusing to use it (run: chmod 0700 %s)", km.Dir, km.Dir))}
		}},
		{"key is a symbolic link", nil, func(t *testing.T, km *receipts.FileKeyManager) []doctor.Finding {
			other := &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "other")}
			createKey(t, other)
			if err := os.MkdirAll(km.Dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other.Path(), km.Path()); err != nil {
				t.Fatal(err)
			}
			return []doctor.Finding{keyFinding(km, fmt.Sprintf("master key %s is not a regular file", km.Path()))}
		}},
		{"key that does not decode", nil, func(t *testing.T, km *receipts.FileKeyManager) []doctor.Finding {
			if err := os.MkdirAll(km.Dir, 0o700); err != nil {
				t.Fatal(err)
			}
			write(t, km.Path(), "not hex\n")
			return []doctor.Finding{keyFinding(km, fmt.Sprintf("master key %s: want 64 hex digits", km.Path()))}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			km := &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "keys")}
			want := c.setup(t, km)
			assertFindings(t, doctor.CheckKey(context.Background(), km, c.hooks), want)
		})
	}
}

func createKey(t *testing.T, km *receipts.FileKeyManager) {
	t.Helper()
	h := hook("a")
	h.UID = "uid-a"
	if _, err := km.Signer(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

func keyFinding(km *receipts.FileKeyManager, reason string) doctor.Finding {
	return doctor.Finding{Check: doctor.CheckReceiptKey, Severity: doctor.Error, Path: km.Path(), Reason: reason,
		Fix: fmt.Sprintf("chmod 700 %s && chmod 600 %s; the key must be a plain file only you can read, holding 64 hex digits", km.Dir, km.Path())}
}

// TestCheckHookHistory checks a status against the replay of its history.
func TestCheckHookHistory(t *testing.T) {
	completed := hook("done")
	completed.Namespace = "team"
	completed.Status.State = v1.HookCompleted
	damaged := hook("broken")
	damaged.Status.History = []v1.HistoryEntry{{Event: "validate", From: v1.HookInitializing, To: v1.HookStepValidating}}
	cases := []struct {
		name string
		hook *v1.Hook
		want []doctor.Finding
	}{
		{"agrees with its history", hook("a"), nil},
		{"completed without a history", completed, []doctor.Finding{{Check: doctor.CheckHistory, Severity: doctor.Error, Object: "hook/team/done",
			Reason: "the status disagrees with the replay of status.history: status.state is completed; history says initializing",
			Fix:    "the status was changed outside the state machine (a hand edit?), and tether refuses every transition of the Hook until it agrees: see tether describe hook done -n team, check the work, then run tether repair done -n team to rebuild the status from the history"}}},
		{"a damaged history", damaged, []doctor.Finding{{Check: doctor.CheckHistory, Severity: doctor.Error, Object: "hook/default/broken",
			Reason: "the status disagrees with the replay of status.history: status.history is not a sequence of transitions; history says history[0] (validate from initializing): not a transition",
			Fix:    "the history itself is damaged, so tether repair cannot rebuild the status from it: see tether describe hook broken; do not trust either, and give the Hook up (tether fail broken --reason ...) or restore its file from a backup"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertFindings(t, doctor.CheckHookHistory(c.hook), c.want)
		})
	}
}

// TestCheckHookReceipts checks a Hook's steps against their receipts.
func TestCheckHookReceipts(t *testing.T) {
	passed := hook("p")
	passed.Status.Steps = []v1.StepResult{{Name: "vet", Phase: v1.StepPassed, Attempts: 1}}
	cases := []struct {
		name string
		hook *v1.Hook
		want []doctor.Finding
	}{
		{"no step passed", hook("a"), nil},
		{"a passed step without its receipt", passed, []doctor.Finding{{Check: doctor.CheckReceipts, Severity: doctor.Error, Object: "hook/default/p",
			Reason: "the receipts do not support the status: " + receipts.Check(passed, nil, receipts.ErrNoKey).Failures()[0].Error(),
			Fix:    "see tether receipts verify p; do not trust the step's result: have the agent run the step again, or tether fail p --reason ..."}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			km := &receipts.FileKeyManager{Dir: filepath.Join(t.TempDir(), "keys")}
			assertFindings(t, doctor.CheckHookReceipts(context.Background(), c.hook, km), c.want)
			assertFindings(t, doctor.CheckHookReceipts(context.Background(), c.hook, nil), c.want)
		})
	}
}

// TestCheckWorker checks recorded process identities against the
// processes of this machine: this test's own process, one that has exited,
// a PID whose start time differs, another boot, and another host.
func TestCheckWorker(t *testing.T) {
	self, err := supervise.Identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	gone := exited.Process.Pid
	worker := func(pid int, ticks int64, boot, host string) *v1.Worker {
		return &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w"},
			Spec:   v1.WorkerSpec{Command: []string{"agent"}},
			Status: v1.WorkerStatus{PID: int32(pid), ProcessStartTicks: ticks, BootID: boot, Host: host}}
	}
	fix := "start tether run, which records the exit and restarts the Worker by its restart policy; or tether worker restart w"
	finding := func(reason string) []doctor.Finding {
		return []doctor.Finding{{Check: doctor.CheckWorkers, Severity: doctor.Error, Object: "worker/default/w", Reason: reason, Fix: fix}}
	}
	adopted := worker(self.PID, self.StartTicks+1, self.BootID, "here")
	adopted.Spec = v1.WorkerSpec{Adopt: &v1.AdoptSpec{PID: int32(self.PID)}}
	cases := []struct {
		name string
		w    *v1.Worker
		want []doctor.Finding
	}{
		{"its process runs", worker(self.PID, self.StartTicks, self.BootID, "here"), nil},
		{"no host recorded, its process runs", worker(self.PID, self.StartTicks, self.BootID, ""), nil},
		{"no process recorded", worker(0, 0, "", "here"), nil},
		{"on another host", worker(gone, 1, "other-boot", "elsewhere"), nil},
		{"its process exited", worker(gone, 1, self.BootID, "here"),
			finding(fmt.Sprintf("records pid %d (start 1), which no longer runs", gone))},
		{"its PID was reused", worker(self.PID, self.StartTicks+1, self.BootID, "here"),
			finding(fmt.Sprintf("records pid %d (start %d), but pid %d is now another process (start %d): the Worker's process is gone and its PID reused", self.PID, self.StartTicks+1, self.PID, self.StartTicks))},
		{"from before a reboot", worker(self.PID, self.StartTicks, "old-boot", "here"),
			finding(fmt.Sprintf("records pid %d (start %d) from boot old-boot, but this machine has since restarted (boot %s): the process is gone", self.PID, self.StartTicks, self.BootID))},
		{"adopted, its process gone", adopted, []doctor.Finding{{Check: doctor.CheckWorkers, Severity: doctor.Error, Object: "worker/default/w",
			Reason: fmt.Sprintf("records pid %d (start %d), but pid %d is now another process (start %d): the Worker's process is gone and its PID reused", self.PID, self.StartTicks+1, self.PID, self.StartTicks),
			Fix:    "the adopted process is gone: start tether run to record it, or tether delete worker w"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertFindings(t, doctor.CheckWorker(c.w, "here", self.BootID), c.want)
		})
	}
}

// TestMissingStore checks that a missing store is an error matching
// filestore.ErrNoStore, and that doctor does not create it; a file where
// the store should be is ErrNotAStore.
func TestMissingStore(t *testing.T) {
	for _, name := range []string{"missing", "file"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if name == "file" {
				write(t, dir, "x")
			}
			_, err := doctor.Run(context.Background(), doctor.Options{Dir: dir, Inspect: inspect(t), Host: "here"})
			if want := map[string]error{"missing": filestore.ErrNoStore, "file": doctor.ErrNotAStore}[name]; !errors.Is(err, want) {
				t.Fatalf("err = %v, want one matching %v", err, want)
			}
			if name == "missing" {
				if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s was created: %v", dir, err)
				}
			}
		})
	}
}

// entry is what TestRunIsReadOnly compares of one path of the tree.
type entry struct {
	mode    fs.FileMode
	size    int64
	mtime   int64
	content string
	link    string
}

func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		e := entry{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			e.content = string(data)
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		out[path] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRunIsReadOnly breaks a store in every way at once (and its Hook's
// history, its receipts and its Worker's process), holds the store's
// write lock meanwhile, and checks that Run reports each problem and
// leaves every byte, mode and mtime of the store and the key directory as
// they were: it takes no lock, repairs nothing, adopts no edit and does
// not block on the FIFO.
func TestRunIsReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := testsupport.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, c := hook("a"), hook("c")
	w := &v1.Worker{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w"}, Spec: v1.WorkerSpec{Command: []string{"agent"}}}
	for _, o := range []client.Object{h, c, w} {
		if err := s.Client().Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	h.Status.State = v1.HookCompleted
	h.Status.Steps = []v1.StepResult{{Name: "vet", Phase: v1.StepPassed, Attempts: 1}}
	if err := s.Client().Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	self, err := supervise.Identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	w.Status = v1.WorkerStatus{PID: int32(self.PID), ProcessStartTicks: self.StartTicks + 1, BootID: self.BootID, Host: "here"}
	if err := s.Client().Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ns := filepath.Join(dir, "hooks", "default")
	write(t, filepath.Join(ns, ".tmp-a.yaml-999999999-xyz"), "old")
	write(t, filepath.Join(ns, "bad.yaml"), "not: [valid\n")
	if err := syscall.Mkfifo(filepath.Join(ns, "fifo.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ns, "a.yaml"), filepath.Join(ns, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{\"bad\n"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	// A valid hand edit of a Hook's status, which opening the store would
	// adopt (and doctor checks as adopted).
	edited := filepath.Join(ns, "c.yaml")
	write(t, edited, "apiVersion: agents.tether.dev/v1alpha1\nkind: Hook\nmetadata:\n  name: c\n  namespace: default\nspec:\n  goal: g\n  steps:\n  - name: vet\nstatus:\n  state: failed\n")
	if err := os.Chmod(filepath.Join(dir, "workers"), 0o770); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(t.TempDir(), "keys")
	createKey(t, &receipts.FileKeyManager{Dir: keys})
	if err := os.Chmod(filepath.Join(keys, "master.key"), 0o640); err != nil {
		t.Fatal(err)
	}

	lock, err := os.Open(filepath.Join(dir, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Close() }()
	if err := atomicfs.Lock(lock, atomicfs.Exclusive); err != nil {
		t.Fatal(err)
	}
	before, keysBefore := snapshot(t, dir), snapshot(t, keys)
	got, err := doctor.Run(ctx, doctor.Options{Dir: dir, Inspect: inspect(t), KeyDir: keys, Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("the store changed:\nbefore %v\n after %v", before, after)
	}
	if after := snapshot(t, keys); !reflect.DeepEqual(after, keysBefore) {
		t.Errorf("the key directory changed:\nbefore %v\n after %v", keysBefore, after)
	}
	var checks []string
	for _, f := range got {
		checks = append(checks, f.Check+" "+f.Where())
	}
	want := []string{
		"permissions " + filepath.Join(dir, "workers"),
		"temp-files " + filepath.Join(ns, ".tmp-a.yaml-999999999-xyz"),
		"quarantine " + filepath.Join(ns, "bad.yaml"),
		"entries " + filepath.Join(ns, "fifo.yaml"),
		"entries " + filepath.Join(ns, "link.yaml"),
		"journal " + filepath.Join(dir, "journal"),
		"receipt-key " + filepath.Join(keys, "master.key"),
		"history hook/default/a",
		"history hook/default/c",
		"receipts hook/default/a",
		"workers worker/default/w",
	}
	if !reflect.DeepEqual(checks, want) {
		t.Fatalf("findings:\n got %q\nwant %q\n%v", checks, want, got)
	}
}
