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

package main_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/agent/checkpoint"
	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/receipts"
	"github.com/tether-dev/tether/internal/hook/recoveryfile"
	"github.com/tether-dev/tether/internal/settlegc"
	"github.com/tether-dev/tether/internal/testing/testenv"
	"github.com/tether-dev/tether/internal/testing/testsupport"
	"github.com/tether-dev/tether/internal/workspace/snapshot"
)

const (
	// operatorScaleHooks is how many Hooks BenchmarkOperatorScale10k serves.
	operatorScaleHooks = 10000
	// operatorScaleEdits is the fewest edits timed on each backend.
	operatorScaleEdits = 200
	// hooksPerWorker and checkpointsPerHook shape the fleet around the
	// Hooks, as issue 29 sets it: one Worker per 10 Hooks, each Worker
	// supervising a live process, and 5 Checkpoints per Hook, each with
	// its snapshot ref in a real repository.
	hooksPerWorker     = 10
	checkpointsPerHook = 5
)

// BenchmarkOperatorScale10k runs the built binary on 10,000 Hooks, with
// the fleet around them (scaleFleet: 1,000 Workers, 50,000 Checkpoints), on
// each backend in the same run: `tether run` on the local store and `tether run
// --cluster` on envtest's kube-apiserver and etcd. For each it reports the
// time from start until the Hook controller's caches synced (its "Starting
// workers" log line, which controller-runtime writes once WaitForCacheSync
// returns), until the last Hook's first reconcile was stored (each writes
// the ReceiptsVerified condition the populated Hooks lack), until its
// collector settled (settlegc: the wave's queues drained), the process's
// RSS (/proc/PID/status: VmRSS at sync and settledPause after the edits,
// VmHWM its peak), and edit → reconcile through the backend's client once
// settled: a spec edit until status.observedGeneration reaches it, seen
// through a watch, and the edits' CPU. Ratios are local store /
// kube-apiserver.
func BenchmarkOperatorScale10k(b *testing.B) {
	env := testenv.Start(b)
	home := scaleHome(b)

	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	// Populating and editing measure the server, not client-go's 5 QPS.
	cfg.QPS, cfg.Burst = -1, 0
	kube, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	const ns = "scale"
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := kube.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: receipts.DefaultSecretName},
		Data:       map[string][]byte{receipts.SecretKey: key},
	}); err != nil {
		b.Fatal(err)
	}
	proto := scaleProto(b)
	fleet := newScaleFleet(b, operatorScaleHooks)
	populated := time.Now()
	fleet.populate(b, kube, ns, proto, 32)
	b.Logf("populated kube-apiserver with %d Hooks, %d Workers and %d Checkpoints in %v", operatorScaleHooks, len(fleet.pids), operatorScaleHooks*checkpointsPerHook, time.Since(populated).Round(time.Millisecond))

	dir := filepath.Join(b.TempDir(), "store")
	fill := testsupport.Store(b, dir, testsupport.WithoutFsync)
	fleet.populate(b, fill.Client(), "default", proto, 8)
	_ = fill.Close()
	// Edits go through a store opened as the CLI opens it, with fsyncs.
	local := testsupport.Store(b, dir).Client()

	b.ResetTimer()
	largs := []string{"run", "--store", dir, "--metrics-bind-address", "0"}
	cargs := []string{"run", "--cluster", "--kubeconfig", env.Kubeconfig, "-n", ns}
	lr := runScale(b, local, "default", home, operatorScaleHooks, largs...)
	cr := runScale(b, kube, ns, home, operatorScaleHooks, cargs...)
	b.StopTimer()
	lre := restartScale(b, home, "store-restart", largs...)
	cre := restartScale(b, home, "cluster-restart", cargs...)
	lf := cacheFloor(b, "store", dir)
	cf := cacheFloor(b, "cluster", env.Kubeconfig)
	for _, m := range []struct {
		unit        string
		local, kube float64
	}{
		{"restart-sync-ms", ms(lre.synced), ms(cre.synced)},
		{"restart-settle-ms", ms(lre.settled), ms(cre.settled)},
		{"restart-rss-settled-MiB", lre.rssSettled, cre.rssSettled},
		{"floor-sync-ms", ms(lf.synced), ms(cf.synced)},
		{"floor-rss-settled-MiB", lf.rssSettled, cf.rssSettled},
		{"floor-rss-anon-MiB", lf.rssAnon, cf.rssAnon},
		{"floor-hwm-MiB", lf.hwm, cf.hwm},
		{"settled-over-floor", lr.rssSettled / lf.rssSettled, cr.rssSettled / cf.rssSettled},
	} {
		b.ReportMetric(m.local, "local-"+m.unit)
		b.ReportMetric(m.kube, "kube-"+m.unit)
	}

	for _, m := range []struct {
		unit        string
		local, kube float64
	}{
		{"sync-ms", ms(lr.synced), ms(cr.synced)},
		{"last-first-reconcile-ms", ms(lr.wave), ms(cr.wave)},
		{"rss-sync-MiB", lr.rssSync, cr.rssSync},
		{"settle-ms", ms(lr.settled), ms(cr.settled)},
		{"edits-cpu-ms", ms(lr.editsCPU), ms(cr.editsCPU)},
		{"edit-alloc-KiB", lr.editAlloc / 1024, cr.editAlloc / 1024},
		{"threads", lr.threads, cr.threads},
		{"rss-settled-MiB", lr.rssSettled, cr.rssSettled},
		{"rss-anon-MiB", lr.rssAnon, cr.rssAnon},
		{"hwm-MiB", lr.hwm, cr.hwm},
		{"cpu-ms", ms(lr.cpu), ms(cr.cpu)},
		{"p50-ms", ms(lr.p50), ms(cr.p50)},
		{"p99-ms", ms(lr.p99), ms(cr.p99)},
	} {
		b.ReportMetric(m.local, "local-"+m.unit)
		b.ReportMetric(m.kube, "kube-"+m.unit)
		b.ReportMetric(m.local/m.kube, "ratio-"+strings.TrimSuffix(strings.TrimSuffix(m.unit, "-ms"), "-MiB"))
	}
}

// BenchmarkLocalOperatorScale10k is the local store's half of
// BenchmarkOperatorScale10k alone, which needs no kube-apiserver and takes
// seconds to populate instead of minutes.
//
// It also measures, in the same run, the floor under the start-up wave
// (measureWriteFloor), a restart over the settled store (restartScale:
// how long it takes to sync, its memory, and what it appends to the
// journal) and the cache floor (cacheFloor).
func BenchmarkLocalOperatorScale10k(b *testing.B) {
	b.Run("fleet", func(b *testing.B) { localOperatorScale(b, operatorScaleHooks, true) })
	b.Run("hooks", func(b *testing.B) { localOperatorScale(b, operatorScaleHooks, false) })
}

// BenchmarkLocalOperatorScale100k is BenchmarkLocalOperatorScale10k's
// Hooks alone at 100,000 Hooks: the whole `tether run` over a store ten
// times larger. Left out of `make bench` (its setup takes many minutes);
// run it by name (-bench 100k).
func BenchmarkLocalOperatorScale100k(b *testing.B) {
	testsupport.Skip100k(b)
	b.Run("hooks", func(b *testing.B) { localOperatorScale(b, 100000, false) })
}

// localOperatorScale is BenchmarkLocalOperatorScale10k over hooks Hooks,
// with the fleet around them or alone (no Workers, no Checkpoints).
func localOperatorScale(b *testing.B, hooks int, withFleet bool) {
	home := scaleHome(b)
	dir := filepath.Join(b.TempDir(), "store")
	fill := testsupport.Store(b, dir, testsupport.WithoutFsync)
	fleet := newScaleFleet(b, hooks)
	if !withFleet {
		fleet.pids, fleet.checkpoints = nil, 0
	}
	fleet.populate(b, fill.Client(), "default", scaleProto(b), 8)
	_ = fill.Close()
	local := testsupport.Store(b, dir).Client()

	b.ResetTimer()
	args := []string{"run", "--store", dir, "--metrics-bind-address", "0"}
	lr := runScale(b, local, "default", home, hooks, args...)
	b.StopTimer()
	journal := filepath.Join(dir, "journal")
	before := fileSize(b, journal)
	restart := restartScale(b, home, "store-restart", args...)
	grew := fileSize(b, journal) - before
	b.Logf("restart over the settled store: the journal grew by %d bytes", grew)
	floor := cacheFloor(b, "store", dir)
	writes := measureWriteFloor(b, scaleProto(b), hooks)
	for _, m := range []struct {
		unit  string
		value float64
	}{
		{"sync-ms", ms(lr.synced)},
		{"last-first-reconcile-ms", ms(lr.wave)},
		{"floor-store-ms", ms(writes.store)},
		{"floor-fsync-ms", ms(writes.fsync)},
		{"floor-reconcile-ms", ms(writes.reconcile)},
		{"floor-fsync-reconcile-ms", ms(writes.fsyncReconcile)},
		{"restart-journal-bytes", float64(grew)},
		{"rss-sync-MiB", lr.rssSync},
		{"settle-ms", ms(lr.settled)},
		{"edits-cpu-ms", ms(lr.editsCPU)},
		{"edit-alloc-KiB", lr.editAlloc / 1024},
		{"threads", lr.threads},
		{"rss-settled-MiB", lr.rssSettled},
		{"rss-anon-MiB", lr.rssAnon},
		{"hwm-MiB", lr.hwm},
		{"cpu-ms", ms(lr.cpu)},
		{"p50-ms", ms(lr.p50)},
		{"p99-ms", ms(lr.p99)},
		{"restart-sync-ms", ms(restart.synced)},
		{"restart-settle-ms", ms(restart.settled)},
		{"restart-rss-settled-MiB", restart.rssSettled},
		{"restart-hwm-MiB", restart.hwm},
		{"floor-sync-ms", ms(floor.synced)},
		{"floor-rss-settled-MiB", floor.rssSettled},
		{"floor-rss-anon-MiB", floor.rssAnon},
		{"floor-hwm-MiB", floor.hwm},
		{"settled-over-floor", lr.rssSettled / floor.rssSettled},
	} {
		b.ReportMetric(m.value, m.unit)
	}
	if lr.rssIdle != 0 {
		b.ReportMetric(lr.rssIdle, "rss-idle-MiB")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// fileSize is the size of the file at path.
func fileSize(b *testing.B, path string) int64 {
	b.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// writeFloor is the floor under a start-up wave, measured in the same run.
type writeFloor struct {
	// store is as many status writes as the wave's through a file store (each
	// the one a first reconcile makes: a condition, observedGeneration),
	// hookReconcilers writers at once, and nothing else running.
	store time.Duration
	// reconcile is the same status writes again, each followed by the
	// Hook's recovery file written durably: the writes of a first reconcile
	// of the wave, with no reconciler.
	reconcile time.Duration
	// fsyncReconcile is fsync for twice as many files: as many durable
	// writes as the wave's first reconciles make.
	fsyncReconcile time.Duration
	// fsync is as many bare durable replacements of files of the same size
	// in the same kind of directory, in groups as large: each group a
	// journal append and fsync, each file a temp file fsynced and renamed,
	// and a directory fsync; no encoding, no validation, no lock.
	fsync time.Duration
}

// floorWriters is how many writers the floor runs at once: as many as the
// Hook reconciler works on Hooks.
const floorWriters = 32

// measureWriteFloor fills a store of its own with n Hooks like proto
// (without fsyncs) and times the floor's writes.
func measureWriteFloor(b *testing.B, proto *v1.Hook, n int) writeFloor {
	b.Helper()
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "floor")
	fill := testsupport.Store(b, dir, testsupport.WithoutFsync)
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			h := proto.DeepCopy()
			h.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: scaleHookName(i)}
			status := h.Status
			if err := fill.Client().Create(ctx, h); err != nil {
				return err
			}
			h.Status = status
			return fill.Client().Status().Update(ctx, h)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	_ = fill.Close()
	c := testsupport.Store(b, dir).Client()
	hooks := &v1.HookList{}
	if err := c.List(ctx, hooks, client.InNamespace("default")); err != nil {
		b.Fatal(err)
	}
	size := fileSize(b, filepath.Join(dir, "hooks", "default", scaleHookName(0)+".yaml"))
	var res writeFloor
	res.store = floorWrites(b, c, hooks.Items, "", nil)
	// The second pass is what a first reconcile of the wave writes: its
	// status, then the Hook's recovery file, which it renders (here the same
	// bytes for every Hook, of the real file's size).
	recovery := filepath.Join(dir, "recovery")
	file := recoveryfile.Render(&hooks.Items[0], recoveryfile.Options{})
	res.reconcile = floorWrites(b, c, hooks.Items, " again", func(h *v1.Hook) error {
		return atomicfs.WriteFile(recoveryfile.Path(recovery, h.Namespace, h.Name), file, 0o644)
	})
	hookDir := filepath.Join(dir, "hooks", "default")
	res.fsync = bareDurableWrites(b, hookDir, len(hooks.Items), int(size))
	res.fsyncReconcile = bareDurableWrites(b, hookDir, 2*len(hooks.Items), int(size))
	b.Logf("floor: %d status writes through the store, %d at once: %v; with a recovery file each: %v; as many bare durable writes of %d bytes: %v; twice as many: %v",
		len(hooks.Items), floorWriters, res.store.Round(time.Millisecond), res.reconcile.Round(time.Millisecond), size,
		res.fsync.Round(time.Millisecond), res.fsyncReconcile.Round(time.Millisecond))
	return res
}

// floorWrites updates every Hook's status through c, floorWriters at
// once, each with one condition whose message ends with suffix (a second
// pass must change it), then calls after for it, if set; it returns the
// time all took.
func floorWrites(b *testing.B, c client.Client, hooks []v1.Hook, suffix string, after func(*v1.Hook) error) time.Duration {
	b.Helper()
	ctx := context.Background()
	next := make(chan *v1.Hook)
	var g errgroup.Group
	start := time.Now()
	for range floorWriters {
		g.Go(func() error {
			for h := range next {
				meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{
					Type: controllers.ConditionReceiptsVerified, Status: metav1.ConditionTrue, Reason: controllers.ReasonReceiptsVerified,
					Message: "every passed step's receipts check out" + suffix, ObservedGeneration: h.Generation, LastTransitionTime: metav1.Now(),
				})
				h.Status.ObservedGeneration = h.Generation
				if err := c.Status().Update(ctx, h); err != nil {
					return err
				}
				if after != nil {
					if err := after(h); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	for i := range hooks {
		next <- &hooks[i]
	}
	close(next)
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// bareDurableWrites times n durable replacements of files of size bytes in
// dir, floorWriters at a time, as the store's group commit makes them.
func bareDurableWrites(b *testing.B, dir string, n, size int) time.Duration {
	b.Helper()
	data := []byte(strings.Repeat("x", size-1) + "\n")
	d, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	journal, err := os.OpenFile(filepath.Join(dir, "..", "..", "bare-journal"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = journal.Close() }()
	// The first pass creates the files; the second, timed, replaces them,
	// as every status write replaces its object's file (on a filesystem
	// that delays the reuse of freed inodes, the replaced ones count).
	replaceBare(b, d, journal, data, n)
	start := time.Now()
	replaceBare(b, d, journal, data, n)
	return time.Since(start)
}

// replaceBare writes n files in d durably, floorWriters at a time, each a
// temp file fsynced and renamed over its name, beside a journal append,
// with the journal and the directory fsynced with each group.
func replaceBare(b *testing.B, d, journal *os.File, data []byte, n int) {
	b.Helper()
	dir := d.Name()
	for done := 0; done < n; done += floorWriters {
		group := min(floorWriters, n-done)
		files := make([]*os.File, group)
		var g errgroup.Group
		for k := range group {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf(".bare-%d.tmp", k)), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(data); err != nil {
				b.Fatal(err)
			}
			if _, err := journal.Write(data); err != nil {
				b.Fatal(err)
			}
			files[k] = f
			g.Go(f.Sync)
		}
		g.Go(journal.Sync)
		g.Go(d.Sync)
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		for k, f := range files {
			_ = f.Close()
			if err := os.Rename(f.Name(), filepath.Join(dir, scaleHookName(done+k)+".bare")); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// scaleHome is a TETHER_HOME with a receipt key, so that both backends
// verify the Hooks' passed steps with a key.
func scaleHome(b testing.TB) string {
	b.Helper()
	home := b.TempDir()
	keys := filepath.Join(home, "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		b.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := os.WriteFile(filepath.Join(keys, "master.key"), []byte(hex.EncodeToString(key)), 0o600); err != nil {
		b.Fatal(err)
	}
	return home
}

// scaleProto is testdata/hooks/running.yaml heartbeating now, with a day's
// staleAfter and its passed step declaring no validate commands: the start
// reconciles each Hook once, with no transition and no Warning, as an
// operator restarting over settled Hooks would, but for the one new
// condition each first reconcile stores.
func scaleProto(b testing.TB) *v1.Hook {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hooks", "running.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	h := &v1.Hook{}
	if err := yaml.Unmarshal(data, h); err != nil {
		b.Fatal(err)
	}
	h.Spec.StaleAfter = &metav1.Duration{Duration: 24 * time.Hour}
	h.Spec.Steps[0].Validate = nil
	h.Status.Steps[0].Receipts = nil
	now := metav1.NewMicroTime(time.Now())
	h.Status.LastHeartbeat = &now
	return h
}

// scaleFleet is what surrounds n Hooks: a live process for each Worker to
// supervise (killed when the benchmark ends), and a repository holding a
// snapshot ref for each Checkpoint, all at one commit.
type scaleFleet struct {
	hooks int
	// checkpoints is how many Checkpoints each Hook has.
	checkpoints int
	pids        []int
	workspace   string
	commit      string
}

// newScaleFleet starts the Workers' processes and makes the repository.
func newScaleFleet(b testing.TB, hooks int) *scaleFleet {
	b.Helper()
	f := &scaleFleet{hooks: hooks, checkpoints: checkpointsPerHook, workspace: b.TempDir()}
	for range (hooks + hooksPerWorker - 1) / hooksPerWorker {
		cmd := exec.Command("sleep", "86400")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		f.pids = append(f.pids, cmd.Process.Pid)
	}
	gitIn := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = f.workspace
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("", "init", "-q")
	gitIn("", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "snapshot")
	f.commit = gitIn("", "rev-parse", "HEAD")
	var refs strings.Builder
	for i := range hooks {
		for seq := 1; seq <= checkpointsPerHook; seq++ {
			fmt.Fprintf(&refs, "create %s %s\n", snapshot.Ref("default", scaleHookName(i), int64(seq)), f.commit)
		}
	}
	gitIn(refs.String(), "update-ref", "--stdin")
	gitIn("", "pack-refs", "--all")
	return f
}

func scaleHookName(i int) string { return fmt.Sprintf("hook-%05d", i) }

// populate creates the fleet in ns through c, status included, as the
// reconcilers left it: the Workers supervising their processes, each
// assigned its 10 Hooks, and the Checkpoints of each Hook verified and
// owned by it (their refs named after the default namespace: only their
// workspace and commit are checked).
func (f *scaleFleet) populate(b testing.TB, c client.Client, ns string, proto *v1.Hook, parallel int) {
	b.Helper()
	ctx := context.Background()
	var g errgroup.Group
	g.SetLimit(parallel)
	now := metav1.Now()
	for i, pid := range f.pids {
		g.Go(func() error {
			w := &v1.Worker{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("agent-%04d", i)},
				Spec:       v1.WorkerSpec{Adopt: &v1.AdoptSpec{PID: int32(pid)}},
			}
			return c.Create(ctx, w)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	for i := range f.hooks {
		g.Go(func() error {
			h := proto.DeepCopy()
			h.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: scaleHookName(i)}
			if len(f.pids) > 0 {
				h.Spec.Assignee = fmt.Sprintf("agent-%04d", i/hooksPerWorker)
			}
			status := h.Status
			if err := c.Create(ctx, h); err != nil {
				return err
			}
			h.Status = status
			if err := c.Status().Update(ctx, h); err != nil {
				return err
			}
			for seq := 1; seq <= f.checkpoints; seq++ {
				ref := snapshot.Ref("default", h.Name, int64(seq))
				cp := &v1.Checkpoint{
					ObjectMeta: metav1.ObjectMeta{
						Namespace:  ns,
						Name:       fmt.Sprintf("%s-cp-%d", h.Name, seq),
						Labels:     map[string]string{checkpoint.HookLabel: h.Name},
						Finalizers: []string{checkpoint.Finalizer},
						OwnerReferences: []metav1.OwnerReference{{
							APIVersion: v1.GroupVersion.String(), Kind: "Hook", Name: h.Name, UID: h.UID,
						}},
					},
					Spec: v1.CheckpointSpec{
						HookName:  h.Name,
						Trigger:   v1.CheckpointTrigger("interval"),
						Seq:       int64(seq),
						Step:      h.Spec.Steps[0].Name,
						Workspace: f.workspace,
						Git: &v1.GitState{
							Branch: "main", Commit: f.commit,
							SnapshotRef: ref, SnapshotCommit: f.commit, SnapshotShort: f.commit[:12],
						},
					},
				}
				if err := c.Create(ctx, cp); err != nil {
					return err
				}
				cp.Status = v1.CheckpointStatus{
					ObservedGeneration: cp.Generation,
					Conditions: []metav1.Condition{{
						Type: v1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1.ReasonSnapshotRecorded,
						Message: fmt.Sprintf("%s points at %s", ref, f.commit), LastTransitionTime: now, ObservedGeneration: cp.Generation,
					}},
				}
				if err := c.Status().Update(ctx, cp); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// scaleResult is what runScale measures of one backend.
type scaleResult struct {
	synced, wave, p50, p99   time.Duration
	rssSync, rssSettled, hwm float64
	// rssAnon and rssFile split rssSettled: the heap, stacks and runtime;
	// the binary's own pages, mapped from the file.
	rssAnon, rssFile float64
	// cpu is the process's CPU time (user and system) until settled.
	cpu time.Duration
	// settled is how long after the start the collector settled.
	settled time.Duration
	// editsCPU is the CPU time of the edits, made once it has settled.
	editsCPU time.Duration
	// editAlloc is what the process allocated per edit, in bytes, from
	// the first edit to the last edit's reconcile.
	editAlloc float64
	// threads is how many OS threads the process holds settled: each
	// holds 48 KiB of the runtime's stacks (g0 and the signal stack).
	threads float64
	// rssIdle is VmRSS after idling for scaleIdleEnv's duration past
	// settled; zero when it is not set.
	rssIdle float64
}

// runScale starts `tether args...`, serving the hooks Hooks of ns that c
// reads and writes, measures it, and stops it.
func runScale(b *testing.B, c client.WithWatch, ns, home string, hooks int, args ...string) scaleResult {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	list := &v1.HookList{}
	if err := c.List(ctx, list, client.InNamespace(ns), client.Limit(1)); err != nil {
		b.Fatal(err)
	}
	w, err := c.Watch(ctx, &v1.HookList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	seen := newHookSeen()
	go seen.follow(w)

	profiles := os.Getenv(scaleProfilesEnv)
	var pprofAddr string
	if profiles != "" {
		pprofAddr = freeLocalAddr(b)
		args = append(args, "--pprof-bind-address", pprofAddr)
	}
	// Its own /metrics, overriding args', tells what the edits allocate
	// and how many threads it holds settled: plain HTTP on the cluster
	// too, and no console beside it.
	metricsAddr := freeLocalAddr(b)
	args = append(args, "--metrics-bind-address", metricsAddr, "--metrics-secure=false", "--console-bind-address", "0")
	cmd := exec.Command(tetherBin, args...)
	cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	log := &syncBuffer{}
	sig := newStartSignals()
	go scanSynced(stderr, log, sig)
	var res scaleResult
	select {
	case at := <-sig.synced:
		res.synced = at.Sub(start)
	case <-time.After(5 * time.Minute):
		b.Fatalf("tether %v: the Hook controller never synced:\n%s", args, log.String())
	}
	res.rssSync, _ = procMemory(b, cmd.Process.Pid)
	saveHeap := func(stage string) {
		if profiles != "" {
			saveHeapProfile(b, pprofAddr, filepath.Join(profiles, args[1][2:]+"-"+stage))
			saveGoroutines(b, pprofAddr, filepath.Join(profiles, args[1][2:]+"-"+stage+"-goroutines.txt"))
		}
	}
	saveHeap("sync")
	cpuSaved := make(chan struct{})
	if profiles != "" {
		go func() {
			defer close(cpuSaved)
			saveCPUProfile(b, pprofAddr, filepath.Join(profiles, args[1][2:]+"-wave-cpu.pb.gz"), 10*time.Second)
		}()
		go func() {
			time.Sleep(5 * time.Second)
			for i := range 3 {
				saveGoroutines(b, pprofAddr, filepath.Join(profiles, fmt.Sprintf("%s-wave-goroutines-%d.txt", args[1][2:], i)))
				time.Sleep(500 * time.Millisecond)
			}
		}()
	} else {
		close(cpuSaved)
	}
	wave, ok := seen.waitFirst(hooks, 15*time.Minute*time.Duration(max(1, hooks/operatorScaleHooks)))
	if !ok {
		b.Fatalf("tether %v: only %d of %d Hooks reconciled:\n%s", args, seen.firstCount(), hooks, log.String())
	}
	res.wave = wave.Sub(start)
	<-cpuSaved
	// The edits are the settled process's work: its collector settles
	// once the wave's queues have drained.
	res.settled = awaitSettled(b, sig, start, 30*time.Minute, "tether "+args[1], log)
	cpuBeforeEdits := procCPU(b, cmd.Process.Pid)
	allocBeforeEdits := scrapeMetric(b, metricsAddr, "go_memstats_alloc_bytes_total")

	var latencies []time.Duration
	for i := 0; i < max(b.N, operatorScaleEdits); i++ {
		name := scaleHookName((i * 7919) % hooks)
		var begun time.Time
		var gen int64
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			h := &v1.Hook{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
				return err
			}
			h.Spec.Goal = "edit " + strconv.Itoa(i)
			begun = time.Now()
			if err := c.Update(ctx, h); err != nil {
				return err
			}
			gen = h.Generation
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		at, ok := seen.waitObserved(name, gen, 30*time.Second)
		if !ok {
			b.Fatalf("tether %v: edit %d of %s (generation %d) not reconciled within 30s:\n%s", args, i, name, gen, log.String())
		}
		latencies = append(latencies, at.Sub(begun))
	}
	res.editsCPU = procCPU(b, cmd.Process.Pid) - cpuBeforeEdits
	res.editAlloc = (scrapeMetric(b, metricsAddr, "go_memstats_alloc_bytes_total") - allocBeforeEdits) / float64(len(latencies))
	time.Sleep(settledPause)
	res.threads = scrapeMetric(b, metricsAddr, "go_threads")
	res.rssSettled, res.hwm = procMemory(b, cmd.Process.Pid)
	res.cpu = procCPU(b, cmd.Process.Pid)
	status := procStatus(b, cmd.Process.Pid)
	res.rssAnon, res.rssFile = status["RssAnon"], status["RssFile"]
	saveHeap("settled")
	if idle, err := time.ParseDuration(os.Getenv(scaleIdleEnv)); err == nil {
		time.Sleep(idle)
		res.rssIdle, _ = procMemory(b, cmd.Process.Pid)
		saveHeap("idle")
	}
	slices.Sort(latencies)
	res.p50 = latencies[len(latencies)/2]
	res.p99 = latencies[int(math.Ceil(float64(len(latencies))*0.99))-1]

	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	stopped = true
	b.Logf("tether %s: synced %v, last first reconcile %v, settled %v, RSS %.0f MiB at sync, %.0f settled (anonymous %.0f, file %.0f), %.0f idle, peak %.0f, CPU %v (edits %v, %.0f KiB allocated per edit), %.0f threads; edit → reconcile p50 %v p99 %v (%d edits)",
		args[1], res.synced.Round(time.Millisecond), res.wave.Round(time.Millisecond), res.settled.Round(time.Millisecond), res.rssSync, res.rssSettled, res.rssAnon, res.rssFile, res.rssIdle, res.hwm, res.cpu.Round(10*time.Millisecond), res.editsCPU.Round(10*time.Millisecond), res.editAlloc/1024, res.threads,
		res.p50.Round(10*time.Microsecond), res.p99.Round(10*time.Microsecond), len(latencies))
	return res
}

// startResult is what a start measures that is not the first: a restart
// of `tether run` over the objects it reconciled, or the cache floor.
type startResult struct {
	// synced and settled are how long after the start the caches synced
	// and the collector settled.
	synced, settled          time.Duration
	rssSync, rssSettled, hwm float64
	rssAnon                  float64
	cpu                      time.Duration
}

// restartScale starts `tether args...` again over the objects runScale's
// run left reconciled, and measures its sync and its memory once it has
// settled. name prefixes its profiles.
func restartScale(b *testing.B, home, name string, args ...string) startResult {
	b.Helper()
	profiles := os.Getenv(scaleProfilesEnv)
	var pprofAddr string
	if profiles != "" {
		pprofAddr = freeLocalAddr(b)
		args = append(args, "--pprof-bind-address", pprofAddr)
	}
	cmd := exec.Command(tetherBin, args...)
	cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
	if profiles != "" {
		// The start's CPU: the caches' lists, from as soon as pprof serves.
		go saveCPUProfile(b, pprofAddr, filepath.Join(profiles, name+"-cpu.pb.gz"), 5*time.Second)
	}
	return measureStart(b, cmd, name, pprofAddr, scanSynced, true)
}

// cacheFloor starts the cache floor (runCacheFloor) on backend over
// target, and measures it as restartScale measures a restart.
func cacheFloor(b *testing.B, backend, target string) startResult {
	b.Helper()
	profiles := os.Getenv(scaleProfilesEnv)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), cacheFloorEnv+"="+backend, cacheFloorTarget+"="+target)
	var pprofAddr string
	if profiles != "" {
		pprofAddr = freeLocalAddr(b)
		cmd.Env = append(cmd.Env, cacheFloorPprof+"="+pprofAddr)
	}
	return measureStart(b, cmd, backend+"-floor", pprofAddr, scanFloorSynced, false)
}

// scanFloorSynced signals the times of the floor's "synced" and "settled"
// lines.
func scanFloorSynced(r io.Reader, log *syncBuffer, sig startSignals) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		for prefix, c := range map[string]chan time.Time{"synced ": sig.synced, "settled ": sig.settled} {
			if ns, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				n, _ := strconv.ParseInt(ns, 10, 64)
				sendOnce(c, time.Unix(0, n))
			}
		}
		_, _ = log.Write(append(sc.Bytes(), '\n'))
	}
}

// measureStart runs cmd until scan reports sync (from its stderr, or its
// stdout when fromStderr is false), measures it settledPause after it
// settled, saves its heap profile then when pprofAddr is set, and stops it.
func measureStart(b *testing.B, cmd *exec.Cmd, name, pprofAddr string, scan func(io.Reader, *syncBuffer, startSignals), fromStderr bool) startResult {
	b.Helper()
	var out io.Reader
	var err error
	if fromStderr {
		out, err = cmd.StderrPipe()
	} else {
		cmd.Stderr = os.Stderr
		out, err = cmd.StdoutPipe()
	}
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	log := &syncBuffer{}
	sig := newStartSignals()
	go scan(out, log, sig)
	var res startResult
	select {
	case at := <-sig.synced:
		res.synced = at.Sub(start)
	case <-time.After(5 * time.Minute):
		b.Fatalf("%s never synced:\n%s", name, log.String())
	}
	res.rssSync, _ = procMemory(b, cmd.Process.Pid)
	res.settled = awaitSettled(b, sig, start, 30*time.Minute, name, log)
	time.Sleep(settledPause)
	res.rssSettled, res.hwm = procMemory(b, cmd.Process.Pid)
	res.rssAnon = procStatus(b, cmd.Process.Pid)["RssAnon"]
	res.cpu = procCPU(b, cmd.Process.Pid)
	if profiles := os.Getenv(scaleProfilesEnv); profiles != "" && pprofAddr != "" {
		saveHeapProfile(b, pprofAddr, filepath.Join(profiles, name+"-settled"))
		saveGoroutines(b, pprofAddr, filepath.Join(profiles, name+"-settled-goroutines.txt"))
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	stopped = true
	b.Logf("%s: synced %v, settled %v, RSS %.0f MiB at sync, %.0f settled (anonymous %.0f), peak %.0f, CPU %v",
		name, res.synced.Round(time.Millisecond), res.settled.Round(time.Millisecond), res.rssSync, res.rssSettled, res.rssAnon, res.hwm, res.cpu.Round(10*time.Millisecond))
	return res
}

// scrapeMetric reads the value of the unlabelled metric name from the
// Prometheus endpoint at addr.
func scrapeMetric(b *testing.B, addr, name string) float64 {
	b.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("GET %s/metrics: %s", addr, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	f, ok := families[name]
	if !ok || len(f.GetMetric()) != 1 {
		b.Fatalf("%s/metrics: no single %s", addr, name)
	}
	m := f.GetMetric()[0]
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	b.Fatalf("%s/metrics: %s is neither a counter nor a gauge", addr, name)
	return 0
}

// scaleProfilesEnv names a directory: when set, runScale serves pprof from
// each tether run and saves its heap profile there at sync and settled, as
// store-sync.pb.gz, store-settled.pb.gz, cluster-sync.pb.gz and
// cluster-settled.pb.gz (`go tool pprof -sample_index=inuse_space` or
// alloc_space), each beside its text form (.txt), and the CPU profile of
// the first 10 s after sync, the start-up wave, as store-wave-cpu.pb.gz and
// cluster-wave-cpu.pb.gz.
const scaleProfilesEnv = "TETHER_SCALE_PROFILES"

// scaleIdleEnv is a duration: when set, runScale also reads the RSS of
// `tether run` that long after it settled (rss-idle-MiB), past the
// runtime's forced collection every 2 minutes.
const scaleIdleEnv = "TETHER_SCALE_IDLE"

// freeLocalAddr is a loopback address whose port was free a moment ago.
func freeLocalAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// saveHeapProfile writes the heap profile served at addr to base.pb.gz,
// and its text form, which ends with the runtime's MemStats, to base.txt.
// It is taken without a GC first, as RSS is read: inuse_space is the heap
// as the last GC left it.
func saveHeapProfile(b *testing.B, addr, base string) {
	b.Helper()
	for _, f := range []struct{ query, path string }{{"", base + ".pb.gz"}, {"?debug=1", base + ".txt"}} {
		var resp *http.Response
		var err error
		for range 50 {
			if resp, err = http.Get("http://" + addr + "/debug/pprof/heap" + f.query); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("heap profile from %s: %v %s", addr, err, resp.Status)
		}
		if err := os.WriteFile(f.path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// saveCPUProfile writes the CPU profile of the next d served at addr to
// path. It reports failures with Error, not Fatal: it runs on its own
// goroutine.
func saveCPUProfile(b *testing.B, addr, path string, d time.Duration) {
	var resp *http.Response
	var err error
	for range 500 {
		if resp, err = http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		b.Error(err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Errorf("CPU profile from %s: %v %s", addr, err, resp.Status)
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Error(err)
	}
}

// saveGoroutines writes the goroutines served at addr, grouped by stack,
// to path: where the start-up wave's reconciles wait.
func saveGoroutines(b *testing.B, addr, path string) {
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		b.Error(err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Error(err)
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Error(err)
	}
}

// startSignals are when a started process reported its caches synced and
// its collector settled (settlegc): each is sent once.
type startSignals struct {
	synced, settled chan time.Time
}

func newStartSignals() startSignals {
	return startSignals{synced: make(chan time.Time, 1), settled: make(chan time.Time, 1)}
}

// scanSynced copies the operator's JSON log into log and signals the time
// of the Hook controller's "Starting workers" line (its caches have
// synced) and of settlegc.SettledMessage.
func scanSynced(r io.Reader, log *syncBuffer, sig startSignals) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var entry struct {
			Msg        string  `json:"msg"`
			Controller string  `json:"controller"`
			TS         float64 `json:"ts"`
		}
		if json.Unmarshal(line, &entry) == nil {
			sec, frac := math.Modf(entry.TS)
			at := time.Unix(int64(sec), int64(frac*1e9))
			switch {
			case entry.Msg == "Starting workers" && entry.Controller == "hook":
				sendOnce(sig.synced, at)
			case entry.Msg == settlegc.SettledMessage:
				sendOnce(sig.settled, at)
			}
		}
		_, _ = log.Write(append(line, '\n'))
	}
}

// sendOnce sends at on c unless c is full: a time not yet taken stays.
func sendOnce(c chan time.Time, at time.Time) {
	select {
	case c <- at:
	default:
	}
}

// settledPause is how long after a process settled, or after the edits,
// its memory is read: the runtime returns the freed pages in the call
// that settles, and the process then idles. After the edits that is long
// enough for settlegc's two idle looks a second apart and the collection
// that follows them.
const settledPause = 5 * time.Second

// awaitSettled waits for sig's settled time, up to within, and returns how
// long after start it came.
func awaitSettled(b *testing.B, sig startSignals, start time.Time, within time.Duration, name string, log *syncBuffer) time.Duration {
	b.Helper()
	select {
	case at := <-sig.settled:
		sendOnce(sig.settled, at)
		return at.Sub(start)
	case <-time.After(within):
		b.Fatalf("%s never settled its collector within %v:\n%s", name, within, log.String())
		return 0
	}
}

// procMemory reads VmRSS and VmHWM of pid, in MiB.
func procMemory(b *testing.B, pid int) (rss, hwm float64) {
	b.Helper()
	m := procStatus(b, pid)
	return m["VmRSS"], m["VmHWM"]
}

// procStatus reads the sizes in /proc/PID/status, in MiB by field name.
func procStatus(b *testing.B, pid int) map[string]float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	sizes := map[string]float64{}
	for line := range strings.SplitSeq(string(data), "\n") {
		field, value, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(value, " kB") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		if err != nil {
			b.Fatalf("/proc/%d/status %s: %v", pid, line, err)
		}
		sizes[field] = kb / 1024
	}
	return sizes
}

// procCPU reads the user and system CPU time of pid (/proc/PID/stat).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: utime and stime are the 12th and 13th of them, in clock ticks.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	// USER_HZ is 100 on Linux.
	return time.Duration(ticks) * 10 * time.Millisecond
}

// hookSeen follows a watch of Hooks: when each was first stored with the
// ReceiptsVerified condition (its first reconcile), and when each
// observedGeneration was first seen.
type hookSeen struct {
	mu       sync.Mutex
	changed  *sync.Cond
	first    map[string]bool
	lastAt   time.Time
	observed map[string]map[int64]time.Time
}

func newHookSeen() *hookSeen {
	s := &hookSeen{first: map[string]bool{}, observed: map[string]map[int64]time.Time{}}
	s.changed = sync.NewCond(&s.mu)
	return s
}

func (s *hookSeen) follow(w watch.Interface) {
	for ev := range w.ResultChan() {
		at := time.Now()
		h, ok := asHook(ev.Object)
		if !ok {
			continue
		}
		s.mu.Lock()
		if !s.first[h.Name] && meta.FindStatusCondition(h.Status.Conditions, controllers.ConditionReceiptsVerified) != nil {
			s.first[h.Name] = true
			s.lastAt = at
		}
		gens := s.observed[h.Name]
		if gens == nil {
			gens = map[int64]time.Time{}
			s.observed[h.Name] = gens
		}
		if _, ok := gens[h.Status.ObservedGeneration]; !ok {
			gens[h.Status.ObservedGeneration] = at
		}
		s.changed.Broadcast()
		s.mu.Unlock()
	}
}

func asHook(obj runtime.Object) (*v1.Hook, bool) {
	switch o := obj.(type) {
	case *v1.Hook:
		return o, true
	case *unstructured.Unstructured:
		h := &v1.Hook{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, h) == nil {
			return h, true
		}
	}
	return nil, false
}

func (s *hookSeen) firstCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.first)
}

// wait waits, up to within, until done holds under the lock.
func (s *hookSeen) wait(within time.Duration, done func() bool) bool {
	timer := time.AfterFunc(within, func() { s.mu.Lock(); s.changed.Broadcast(); s.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(within)
	s.mu.Lock()
	defer s.mu.Unlock()
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		s.changed.Wait()
	}
	return true
}

func (s *hookSeen) waitFirst(n int, within time.Duration) (time.Time, bool) {
	ok := s.wait(within, func() bool { return len(s.first) >= n })
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAt, ok
}

func (s *hookSeen) waitObserved(name string, gen int64, within time.Duration) (time.Time, bool) {
	var at time.Time
	ok := s.wait(within, func() bool {
		for g, t := range s.observed[name] {
			if g >= gen && (at.IsZero() || t.Before(at)) {
				at = t
			}
		}
		return !at.IsZero()
	})
	return at, ok
}
