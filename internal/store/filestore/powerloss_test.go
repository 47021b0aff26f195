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

package filestore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/atomicfs"
	"github.com/tether-dev/tether/internal/store/filestore"
)

// inodeKey names a file or directory for the life of the test: an inode
// number can be reused after an unlink, its birth time tells them apart.
type inodeKey struct {
	ino       uint64
	birthSec  int64
	birthNsec uint32
}

// dirEntry is a name in a directory as of the directory's last fsync.
type dirEntry struct {
	key inodeKey
	dir bool
}

// diskImage is what a power loss leaves of the files the store wrote: for
// each file, its content as of its last fsync (nothing if it never had
// one), and for each directory, its names as of its last fsync. Every
// write, rename, link and unlink not covered by an fsync is dropped, the
// strictest reading of POSIX; real filesystems keep some of them, which a
// store correct here survives as well, since it only relies on fsyncs.
type diskImage struct {
	files map[inodeKey][]byte
	dirs  map[inodeKey]map[string]dirEntry
	// acked is what the workload had acknowledged when the image was taken.
	acked ackedWrites
}

// ackedWrites are the writes a workload saw succeed, and the ones it tried.
type ackedWrites struct {
	count   map[string]int  // highest acknowledged count annotation per Hook
	tried   map[string]int  // highest count annotation written per Hook
	created map[string]bool // acknowledged creates
	deleted map[string]bool // acknowledged deletes
	tryDel  map[string]bool // deletes tried
}

func (a ackedWrites) clone() ackedWrites {
	return ackedWrites{count: maps.Clone(a.count), tried: maps.Clone(a.tried), created: maps.Clone(a.created), deleted: maps.Clone(a.deleted), tryDel: maps.Clone(a.tryDel)}
}

// powerLossIO is the filesystem's IO that, at every fsync, first records
// the disk image a power loss at that moment would leave (one just before
// the fsync: the image changes only at fsyncs, and this is its last moment
// with the most writes acknowledged), then applies the fsync to the image.
type powerLossIO struct {
	mu      sync.Mutex
	current diskImage
	images  []diskImage
	acked   ackedWrites
}

func newPowerLossIO() *powerLossIO {
	return &powerLossIO{
		current: diskImage{files: map[inodeKey][]byte{}, dirs: map[inodeKey]map[string]dirEntry{}},
		acked:   ackedWrites{count: map[string]int{}, tried: map[string]int{}, created: map[string]bool{}, deleted: map[string]bool{}, tryDel: map[string]bool{}},
	}
}

func statKey(dirfd int, name string, flags int) (inodeKey, bool, error) {
	var st unix.Statx_t
	if err := unix.Statx(dirfd, name, flags|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME|unix.STATX_TYPE, &st); err != nil {
		return inodeKey{}, false, err
	}
	return inodeKey{ino: st.Ino, birthSec: st.Btime.Sec, birthNsec: st.Btime.Nsec}, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// entriesOf reads the names of the open directory f.
func entriesOf(f *os.File) (map[string]dirEntry, error) {
	d, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := map[string]dirEntry{}
	for _, n := range names {
		key, dir, err := statKey(int(d.Fd()), n, 0)
		if err != nil {
			continue // removed meanwhile
		}
		out[n] = dirEntry{key: key, dir: dir}
	}
	return out, nil
}

func (p *powerLossIO) Write(f *os.File, b []byte) (int, error) { return atomicfs.Real.Write(f, b) }

func (p *powerLossIO) Sync(f *os.File) error {
	// What the fsync covers is read before it: a change racing with it
	// counts as not durable.
	key, dir, err := statKey(int(f.Fd()), "", unix.AT_EMPTY_PATH)
	if err != nil {
		return err
	}
	var entries map[string]dirEntry
	var content []byte
	if dir {
		entries, err = entriesOf(f)
	} else {
		content, err = os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.images = append(p.images, p.snapshot())
	p.mu.Unlock()
	if err := atomicfs.Real.Sync(f); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if dir {
		p.current.dirs[key] = entries
	} else {
		p.current.files[key] = content
	}
	return nil
}

// snapshot returns the image a power loss now would leave. The caller holds mu.
func (p *powerLossIO) snapshot() diskImage {
	return diskImage{files: maps.Clone(p.current.files), dirs: maps.Clone(p.current.dirs), acked: p.acked.clone()}
}

// baseline makes the whole tree at root durable, as after a sync(2).
func (p *powerLossIO) baseline(t *testing.T, root string) inodeKey {
	t.Helper()
	unix.Sync()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = diskImage{files: map[inodeKey][]byte{}, dirs: map[inodeKey]map[string]dirEntry{}}
	var walk func(path string) inodeKey
	walk = func(path string) inodeKey {
		f, err := os.Open(path)
		must(t, err)
		defer func() { _ = f.Close() }()
		key, _, err := statKey(int(f.Fd()), "", unix.AT_EMPTY_PATH)
		must(t, err)
		entries, err := entriesOf(f)
		must(t, err)
		p.current.dirs[key] = entries
		for name, e := range entries {
			if e.dir {
				walk(filepath.Join(path, name))
				continue
			}
			data, err := os.ReadFile(filepath.Join(path, name))
			must(t, err)
			p.current.files[e.key] = data
		}
		return key
	}
	return walk(root)
}

// materialize writes the image of the directory root into dst.
func (img diskImage) materialize(t *testing.T, root inodeKey, dst string) {
	t.Helper()
	for name, e := range img.dirs[root] {
		path := filepath.Join(dst, name)
		if e.dir {
			must(t, os.Mkdir(path, 0o700))
			img.materialize(t, e.key, path)
			continue
		}
		must(t, os.WriteFile(path, img.files[e.key], 0o600))
	}
}

// TestPowerLoss runs concurrent creates, updates and deletes (so that
// group commits form) on a store whose fsyncs are recorded, then, for the
// image a power loss would leave just before each fsync, opens the store
// and checks that every acknowledged write survived, that no write
// half-appeared (every object file is whole and agrees with the journal),
// and that nothing is lost that the journal holds.
func TestPowerLoss(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pl := newPowerLossIO()
	s := openStore(t, dir, func(o *filestore.Options) { o.IO = pl })
	c := s.Client()
	const writers, rounds = 4, 8
	for i := range writers {
		must(t, c.Create(ctx, hook(fmt.Sprintf("w%d", i))))
	}
	root := pl.baseline(t, dir)
	var wg sync.WaitGroup
	record := func(f func(a *ackedWrites)) {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		f(&pl.acked)
	}
	for i := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("w%d", i)
			h := &agentsv1alpha1.Hook{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
				t.Error(err)
				return
			}
			for n := 1; n <= rounds; n++ {
				h.Annotations = map[string]string{countAnnotation: strconv.Itoa(n)}
				record(func(a *ackedWrites) { a.tried[name] = n })
				if err := c.Update(ctx, h); err != nil {
					t.Error(err)
					return
				}
				record(func(a *ackedWrites) { a.count[name] = n })
				created := hook(fmt.Sprintf("c%d-%d", i, n))
				if n == 2 {
					created.Namespace = fmt.Sprintf("ns%d", i) // a new directory
				}
				key := created.Namespace + "/" + created.Name
				if err := c.Create(ctx, created); err != nil {
					t.Error(err)
					return
				}
				record(func(a *ackedWrites) { a.created[key] = true })
				if n%3 == 0 {
					record(func(a *ackedWrites) { a.tryDel[key] = true })
					if err := c.Delete(ctx, created); err != nil {
						t.Error(err)
						return
					}
					record(func(a *ackedWrites) { a.deleted[key] = true })
				}
			}
		})
	}
	wg.Wait()
	must(t, s.Close())
	n := pl.checkEveryImage(t, root, "")
	t.Logf("%d power losses, each with every unsynced write dropped", n)
}

// checkEveryImage adds the image after the last fsync, then, for each
// image, rebuilds the directory root as a power loss would leave it and
// checks the store at rel inside it. It returns how many it checked.
func (p *powerLossIO) checkEveryImage(t *testing.T, root inodeKey, rel string) int {
	t.Helper()
	p.mu.Lock()
	p.images = append(p.images, p.snapshot())
	images := p.images
	p.mu.Unlock()
	for i, img := range images {
		crashed := filepath.Join(t.TempDir(), "root")
		must(t, os.Mkdir(crashed, 0o700))
		img.materialize(t, root, crashed)
		checkAfterPowerLoss(t, fmt.Sprintf("power loss %d of %d", i+1, len(images)), filepath.Join(crashed, rel), img.acked)
	}
	return len(images)
}

// checkAfterPowerLoss opens the store left by a power loss and checks it
// against what was acknowledged before.
func checkAfterPowerLoss(t *testing.T, when, dir string, acked ackedWrites) {
	t.Helper()
	ctx := context.Background()
	s, err := newStore(dir)
	if err != nil {
		t.Fatalf("%s: opening: %v", when, err)
	}
	defer func() { _ = s.Close() }()
	c := s.Client()
	list := &agentsv1alpha1.HookList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatalf("%s: list: %v", when, err)
	}
	listed := map[string]*agentsv1alpha1.Hook{}
	for i := range list.Items {
		h := &list.Items[i]
		listed[h.Namespace+"/"+h.Name] = h
	}
	for name, n := range acked.count {
		h := listed["default/"+name]
		if h == nil {
			t.Fatalf("%s: %s is gone", when, name)
		}
		if got := readCount(h); got < n || got > acked.tried[name] {
			t.Fatalf("%s: %s has count %d; %d was acknowledged, %d the last written", when, name, got, n, acked.tried[name])
		}
	}
	for key := range acked.created {
		if _, ok := listed[key]; !ok && !acked.tryDel[key] {
			t.Fatalf("%s: the acknowledged create of %s is lost", when, key)
		}
	}
	for key := range acked.deleted {
		if _, ok := listed[key]; ok {
			t.Fatalf("%s: the acknowledged delete of %s is undone", when, key)
		}
	}
	// Nothing half-appeared: the journal and the object files agree.
	newest := newestEntries(t, filepath.Join(dir, "journal"))
	for key, e := range newest {
		h, ok := listed[key]
		switch {
		case e.Type == "DELETED" && ok:
			t.Fatalf("%s: %s is listed, but the journal deleted it at resourceVersion %d", when, key, e.RV)
		case e.Type != "DELETED" && !ok:
			t.Fatalf("%s: %s is missing, but the journal holds it at resourceVersion %d", when, key, e.RV)
		case ok && h.ResourceVersion != strconv.FormatUint(e.RV, 10):
			t.Fatalf("%s: %s has resourceVersion %s, the journal %d", when, key, h.ResourceVersion, e.RV)
		}
	}
	for key := range listed {
		if _, ok := newest[key]; !ok {
			t.Fatalf("%s: %s is listed but not in the journal", when, key)
		}
	}
	for _, p := range inspect(t, dir) {
		t.Fatalf("%s: %s: %s", when, p.Path, p.Reason)
	}
	// The store still takes writes.
	if err := c.Create(ctx, hook("after-power-loss")); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("%s: a write after the power loss: %v", when, err)
	}
}

// journalLine is what the check reads of a journal line.
type journalLine struct {
	RV        uint64 `json:"rv"`
	Type      string `json:"type"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Resource  string `json:"resource"`
}

// newestEntries returns the newest journal entry of each Hook, by
// "namespace/name".
func newestEntries(t *testing.T, path string) map[string]journalLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]journalLine{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var l journalLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("journal line %q: %v", sc.Text(), err)
		}
		if l.RV != 0 && l.Resource == "hooks" {
			out[l.Namespace+"/"+l.Name] = l
		}
	}
	return out
}

// TestPowerLossOfANewStore creates a store's files where there were none
// and writes to it, with every fsync recorded from before: a power loss at
// any fsync must keep every acknowledged write, so the names of the
// store's directory, its lock file and its journal must be durable by the
// first acknowledgement. The store starts from nothing, or from a
// directory holding only the object directories (a store copied without
// its journal, or laid out by hand).
func TestPowerLossOfANewStore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout []string
	}{
		{name: "no directory"},
		{name: "object directories only", layout: []string{"store/hooks/default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			parent := t.TempDir()
			for _, d := range tc.layout {
				must(t, os.MkdirAll(filepath.Join(parent, d), 0o700))
			}
			pl := newPowerLossIO()
			root := pl.baseline(t, parent)
			s := openStore(t, filepath.Join(parent, "store"), func(o *filestore.Options) { o.IO = pl })
			c := s.Client()
			for i := range 3 {
				created := hook(fmt.Sprintf("h%d", i))
				if err := c.Create(ctx, created); err != nil {
					t.Fatal(err)
				}
				pl.mu.Lock()
				pl.acked.created["default/"+created.Name] = true
				pl.mu.Unlock()
			}
			must(t, s.Close())
			pl.checkEveryImage(t, root, "store")
		})
	}
}
