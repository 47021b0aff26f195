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
	"cmp"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// journalReadMin is the number of files from which a list reads the
// objects' JSON from the journal instead of parsing each file's YAML:
// below it, reading the whole journal costs more than it saves.
const journalReadMin = 256

// journalVersion is where the newest journal entry of one object is.
type journalVersion struct {
	rv     uint64
	offset int64
	size   int
}

// readObjects reads the object files of files, like readObjectFile each.
// A store-written file (valid checksum header) whose resourceVersion is
// the newest in the journal holds the same object as that journal entry,
// so for a large list the object is decoded from the entry's JSON, several
// times faster than parsing YAML, and into its item slot when slots are
// given; a file that its stamp (see stamps.go) shows unchanged since it
// was found so is not even read. Any
// other file (a hand edit, an object whose entry was compacted away, a
// journal that cannot be read) is read from its YAML as before. Slots of
// unreadable files stay nil.
//
// What a large list holds only while it runs is made in a few large
// allocations (the objects' records in one array, paths made when read,
// the journal's index keyed by hashes), not a small one per object: the
// collector never moves what the list keeps, and small ones made in
// between would leave holes among the cache's objects for as long as it
// holds them.
func (s *objectFiles) readObjects(r *resource, files *listedFiles, slots *itemSlots, shape readShape) []*storedObject {
	n := len(files.files)
	read := make([]*storedObject, n)
	records := make([]storedObject, n)
	if slots != nil {
		slots.make(n)
	}
	var index *journalIndex
	var stamps stampSet
	if n >= journalReadMin {
		if index = s.journalIndex(r); index != nil {
			defer func() { _ = index.close() }()
			stamps = s.loadStamps(r)
		}
	}
	// File times come from the real clock, whatever clock the store uses.
	settled := time.Now().Add(-s.stampSettle).UnixNano()
	found := make([]fileStamp, n)
	fresh := make([]bool, n)
	forEachParallel(n, func(i int) {
		var typed client.Object
		if slots != nil {
			typed = slots.at(i)
		}
		path := files.path(i)
		if st, isFresh, ok := s.readFromJournal(&records[i], index, stamps, path, typed, shape, settled); ok {
			if typed != nil && records[i].typed != nil {
				records[i].slot = i + 1
				if shape.transform != nil {
					shape.transform(records[i].typed)
					records[i].transformed = true
				}
			}
			read[i], found[i], fresh[i] = &records[i], st, isFresh
			return
		}
		records[i] = storedObject{}
		if so, err := s.readObjectFile(path); err == nil {
			read[i] = so
		}
	})
	if index != nil {
		s.restamp(r, index, stamps, files, found, fresh)
	}
	return read
}

// restamp saves the stamps a large list found (found[i] is the stamp of
// file i, if any, and fresh[i] tells whether it was new), with those of
// the objects it did not list (another namespace's) that are still in the
// journal at their stamped resourceVersion, when enough changed.
func (s *objectFiles) restamp(r *resource, index *journalIndex, old stampSet, files *listedFiles, found []fileStamp, fresh []bool) {
	next := stampSet{}
	for k, st := range old {
		if v, ok := index.versions[index.keyHash(k)]; ok && v.rv == st.rv {
			next[k] = st
		}
	}
	newCount, dropped := 0, len(old)-len(next)
	for i, f := range files.files {
		key := f.namespace + "/" + f.name
		_, had := next[key]
		switch {
		case found[i] != fileStamp{}:
			next[key] = found[i]
			if fresh[i] {
				newCount++
			}
		case had:
			delete(next, key)
			dropped++
		}
	}
	if stampsChangedEnough(newCount, dropped, len(next)) {
		s.saveStamps(r, next)
	}
}

// readFromJournal decodes the object at path from its journal entry into
// so, and reports false when the file is not exactly that entry's version
// or the entry does not decode to the object the path names. It returns
// the file's stamp too, when it has one: the stamp in stamps that still
// holds, or a fresh one (isFresh) for a file found whole that last changed
// before settled (Unix nanoseconds). Given a mention, an entry whose JSON
// does not contain it is not decoded: the object is marked unmentioned.
// Given fields, an unstructured object is decoded with those fields only.
func (s *objectFiles) readFromJournal(so *storedObject, index *journalIndex, stamps stampSet, path string, typed client.Object, shape readShape, settled int64) (stamp fileStamp, isFresh, ok bool) {
	if index == nil {
		return fileStamp{}, false, false
	}
	_, ns, name, ok := s.keyOfPath(path)
	if !ok {
		return fileStamp{}, false, false
	}
	v, ok := index.versions[index.objectHash(ns, name)]
	if !ok {
		return fileStamp{}, false, false
	}
	// The line is read into a buffer of the pool: what is decoded from it
	// is copied out.
	line := lineBuffers.Get().(*[]byte)
	defer lineBuffers.Put(line)
	if st, ok := stamps[ns+"/"+name]; ok && st.rv == v.rv && s.stampHolds(st, path) {
		object, ok := index.object(v, ns, name, line)
		if !ok {
			return fileStamp{}, false, false
		}
		if shape.mention != nil && !bytes.Contains(object, shape.mention) {
			so.unmentioned = true
			return st, false, true
		}
		if decodeEntryObject(so, object, ns, name, typed, shape.fields) {
			return st, false, true
		}
		return fileStamp{}, false, false
	}
	f, fi, err := s.openRegular(path)
	if err != nil {
		return fileStamp{}, false, false
	}
	s.objectReads.Add(1)
	data, err := readAllSized(f, fi)
	_ = f.Close()
	if err != nil {
		return fileStamp{}, false, false
	}
	rv, _, valid := parseHeader(data)
	if !valid || rv != v.rv {
		return fileStamp{}, false, false
	}
	object, ok := index.object(v, ns, name, line)
	if !ok {
		return fileStamp{}, false, false
	}
	if shape.mention != nil && !bytes.Contains(object, shape.mention) {
		so.unmentioned = true
	} else if !decodeEntryObject(so, object, ns, name, typed, shape.fields) {
		return fileStamp{}, false, false
	}
	if st, ok := stampOf(fi, rv); ok && st.ctime < settled && st.size == int64(len(data)) {
		return st, true, true
	}
	return fileStamp{}, false, true
}

// decodeEntryObject decodes a journal entry's object into so: into typed
// when it is given, else as an unstructured object holding only fields
// when they are given. It reports false when the object does not decode
// to the object namespace/name.
func decodeEntryObject(so *storedObject, object json.RawMessage, ns, name string, typed client.Object, fields fieldTree) bool {
	var obj metav1.Object
	var err error
	if typed != nil {
		so.typed = typed
		obj = so.typed
		err = utiljson.Unmarshal(object, so.typed)
	} else {
		so.obj = &unstructured.Unstructured{}
		obj = so.obj
		if fields != nil {
			so.obj.Object, err = project(object, fields)
		} else {
			err = utiljson.Unmarshal(object, &so.obj.Object)
		}
		if so.obj.Object == nil {
			return false
		}
	}
	return err == nil && obj.GetName() == name && obj.GetNamespace() == ns
}

// itemSlots are the elements of a typed list's Items, made in one slice
// before the objects are decoded into them, so that the list can take
// them where they are instead of copying each in (meta.SetList), which
// cost a large list a fifth of its time.
type itemSlots struct {
	sliceType reflect.Type
	items     reflect.Value
}

// clientObjectType is the interface every item of a typed list implements
// through its pointer.
var clientObjectType = reflect.TypeFor[client.Object]()

// newItemSlots returns the slots of list, or nil when its Items are not a
// slice of structs whose pointers are client.Objects.
func newItemSlots(list client.ObjectList) *itemSlots {
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil
	}
	t := reflect.TypeOf(ptr)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Slice {
		return nil
	}
	elem := t.Elem().Elem()
	if elem.Kind() != reflect.Struct || !reflect.PointerTo(elem).Implements(clientObjectType) {
		return nil
	}
	return &itemSlots{sliceType: t.Elem()}
}

// make readies n slots.
func (s *itemSlots) make(n int) { s.items = reflect.MakeSlice(s.sliceType, n, n) }

// at returns slot i.
func (s *itemSlots) at(i int) client.Object {
	return s.items.Index(i).Addr().Interface().(client.Object)
}

// take sets list's Items to the objects of items, when each was decoded
// into a slot and they come in slot order (a list of files sorted by key
// in which nothing was hand-edited), moving each down over the slots left
// unused; it reports whether it did.
func (s *itemSlots) take(list client.ObjectList, items []*storedObject) bool {
	if s == nil || !s.items.IsValid() {
		return false
	}
	last := 0
	for _, so := range items {
		if so.slot <= last {
			return false
		}
		last = so.slot
	}
	for m, so := range items {
		if so.slot-1 != m {
			s.items.Index(m).Set(s.items.Index(so.slot - 1))
		}
	}
	for j := len(items); j < s.items.Len(); j++ {
		s.items.Index(j).SetZero()
	}
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return false
	}
	reflect.ValueOf(ptr).Elem().Set(s.items.Slice(0, len(items)))
	return true
}

// journalIndex is the newest journal entry of each object of a resource
// that still exists, by "namespace/name", and the journal file they are
// read from. It keeps where each entry is, not the entry: a list reads
// each object's line when it decodes it, instead of holding the whole
// journal while it decodes them all.
type journalIndex struct {
	f *os.File
	// versions is keyed by the hash of "namespace/name" (keyHash), not
	// the string: a string per object would live as long as the list.
	// Two keys that hash alike share a slot; the loser's entry is then
	// not found (object checks the key of the line it reads), and its
	// file is read instead.
	versions map[uint64]journalVersion
	seed     maphash.Seed
}

// keyHash hashes an object's "namespace/name" key.
func (ix *journalIndex) keyHash(key string) uint64 { return maphash.String(ix.seed, key) }

// objectHash is keyHash of namespace + "/" + name, without making it.
func (ix *journalIndex) objectHash(namespace, name string) uint64 {
	var h maphash.Hash
	h.SetSeed(ix.seed)
	_, _ = h.WriteString(namespace)
	_ = h.WriteByte('/')
	_, _ = h.WriteString(name)
	return h.Sum64()
}

// objectHashBytes is objectHash of a namespace and a name read from a line.
func (ix *journalIndex) objectHashBytes(namespace, name []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(ix.seed)
	_, _ = h.Write(namespace)
	_ = h.WriteByte('/')
	_, _ = h.Write(name)
	return h.Sum64()
}

// journalIndexChunk bounds what journalIndex reads of the journal at a time.
const journalIndexChunk = 4 << 20

// journalIndex indexes the journal's entries of r. It returns nil when the
// journal cannot be read; a torn last line is ignored, as by every journal
// reader. The caller holds the read lock, under which the journal only
// grows by lines no list needs, and closes the index.
func (s *objectFiles) journalIndex(r *resource) *journalIndex {
	f, err := s.openBeneath(filepath.Join(s.dir, journalName), os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	ix := &journalIndex{f: f, versions: map[uint64]journalVersion{}, seed: maphash.MakeSeed()}
	resourceField := []byte(`"resource":"` + r.plural + `"`)
	// Room for a chunk and the torn line kept before it: grown only for a
	// longer line.
	buf := make([]byte, 0, journalIndexChunk+64<<10)
	var lines [][]byte
	var offsets []int64
	var offset int64
	for {
		held := len(buf)
		buf = slices.Grow(buf, journalIndexChunk)
		n, err := f.ReadAt(buf[held:held+journalIndexChunk], offset)
		if err != nil && !errors.Is(err, io.EOF) {
			_ = ix.close()
			return nil
		}
		if n == 0 {
			break
		}
		buf = buf[:held+n]
		start := offset - int64(held)
		offset += int64(n)
		lines, offsets = lines[:0], offsets[:0]
		consumed := 0
		for {
			i := bytes.IndexByte(buf[consumed:], '\n')
			if i < 0 {
				break
			}
			lines = append(lines, buf[consumed:consumed+i])
			offsets = append(offsets, start+int64(consumed))
			consumed += i + 1
		}
		if !ix.add(r, lines, offsets, resourceField) {
			_ = ix.close()
			return nil
		}
		buf = append(buf[:0], buf[consumed:]...)
	}
	return ix
}

// add indexes the entries of r among lines, which start at offsets.
func (ix *journalIndex) add(r *resource, lines [][]byte, offsets []int64, resourceField []byte) bool {
	keys := make([]entryKeys, len(lines))
	found := make([]bool, len(lines))
	failed := make([]bool, len(lines))
	forEachParallel(len(lines), func(i int) {
		// Most lines are other resources' entries: skip them undecoded.
		if !bytes.Contains(lines[i], resourceField) {
			return
		}
		k, ok := headKeys(lines[i])
		if !ok {
			failed[i] = true
			return
		}
		if string(k.resource) == r.plural {
			keys[i], found[i] = k, true
		}
	})
	for i, k := range keys {
		if failed[i] {
			return false
		}
		if !found[i] {
			continue
		}
		key := ix.objectHashBytes(k.namespace, k.name)
		if EventType(k.typ) == Deleted {
			delete(ix.versions, key)
			continue
		}
		if cur, ok := ix.versions[key]; !ok || k.rv > cur.rv {
			ix.versions[key] = journalVersion{rv: k.rv, offset: offsets[i], size: len(lines[i])}
		}
	}
	return true
}

// headKeys returns the key fields of a journal line, decoding it as
// entryHead does only when lineKeys cannot read it; false when it does not
// decode.
func headKeys(line []byte) (entryKeys, bool) {
	if k, _, ok := lineKeys(line); ok {
		return k, true
	}
	e, err := entryHead(line)
	if err != nil {
		return entryKeys{}, false
	}
	return keysOf(e), true
}

// lineBuffers holds the buffers journal lines are read into.
var lineBuffers = sync.Pool{New: func() any { return new([]byte) }}

// object reads the object of v, the newest entry of namespace/name, from
// the journal into buf; false if the line there is not that entry.
func (ix *journalIndex) object(v journalVersion, namespace, name string, buf *[]byte) (json.RawMessage, bool) {
	*buf = slices.Grow((*buf)[:0], v.size)[:v.size]
	line := *buf
	if _, err := ix.f.ReadAt(line, v.offset); err != nil {
		return nil, false
	}
	k, object, ok := lineKeys(line)
	if !ok {
		e, err := entryHead(line)
		if err != nil {
			return nil, false
		}
		k, object = keysOf(e), e.Object
	}
	if k.rv != v.rv || string(k.namespace) != namespace || string(k.name) != name {
		return nil, false
	}
	return object, true
}

func (ix *journalIndex) close() error { return ix.f.Close() }

// listedFiles are the object files a list found, in key order. A file is
// named by its directory and its object's key: its path is made when it
// is read, so that no path per object lives as long as the list.
type listedFiles struct {
	dirs  []string
	files []listedFile
}

// listedFile is one object file: dirs[dir]/name.yaml, of object
// namespace/name.
type listedFile struct {
	dir             int
	namespace, name string
}

func (l *listedFiles) path(i int) string {
	f := l.files[i]
	return filepath.Join(l.dirs[f.dir], f.name+fileSuffix)
}

// list reads every object of r in namespace ("" for all). Files that hold
// a hand edit not adopted yet, or that cannot be read, are returned apart
// as pending paths, so that one bad file does not hide the rest.
//
// A list given slots decodes what it can straight into them
// (storedObject.typed), without the map in between; the rest are read as
// unstructured objects. Files are read in key order, so that the slots
// come out in the list's order.
//
// A list given mention leaves out the objects it takes from the journal
// whose entry's JSON does not contain it, without decoding them: the
// garbage collector looks for its owner's uid so, in every kind, at every
// deletion. Objects read another way are all returned.
func (s *objectFiles) list(r *resource, namespace string, slots *itemSlots, shape readShape) (items []*storedObject, pending []string, err error) {
	var dirs []string
	if namespace != "" || !r.namespaced {
		dirs = []string{s.objectDir(r, namespace)}
	} else {
		kindDir := filepath.Join(s.dir, r.plural)
		entries, err := s.readStoreDir(kindDir)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			switch {
			case e.IsDir():
				dirs = append(dirs, filepath.Join(kindDir, e.Name()))
			case strings.HasPrefix(e.Name(), "."):
			case e.Type()&fs.ModeSymlink != 0:
				s.quarantine.report(problemOf(symlinkError(filepath.Join(kindDir, e.Name()))), nil)
			default:
				if p, ok := s.notDirProblem(filepath.Join(kindDir, e.Name())); ok {
					s.quarantine.report(p, nil)
				}
			}
		}
	}
	files := &listedFiles{dirs: dirs}
	for d, dir := range dirs {
		entries, err := s.readStoreDir(dir)
		if err != nil {
			return nil, nil, err
		}
		dirNamespace := ""
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), fileSuffix) || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			_, ns, _, ok := s.keyOfPath(filepath.Join(dir, e.Name()))
			if !ok {
				continue
			}
			// One string for the directory's namespace, not one per file.
			if ns != dirNamespace {
				dirNamespace = strings.Clone(ns)
			}
			files.files = append(files.files, listedFile{d, dirNamespace, strings.TrimSuffix(e.Name(), fileSuffix)})
		}
	}
	slices.SortFunc(files.files, func(a, b listedFile) int {
		return cmp.Or(strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name))
	})
	read := s.readObjects(r, files, slots, shape)
	for i, so := range read {
		if so != nil && so.unmentioned {
			continue
		}
		if so == nil || so.handEdited {
			pending = append(pending, files.path(i))
			continue
		}
		items = append(items, so)
	}
	return items, pending, nil
}
