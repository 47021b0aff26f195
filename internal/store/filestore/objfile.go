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
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/internal/store/yamlenc"
)

// objectFiles is the layer of the object files, above the layout and the
// journal: reading, decoding and writing one object's file, its header,
// and the reads of one object or a list. A file the store wrote is decoded
// from its journal entry when this process remembers it; a file holding a
// hand edit is returned as such (storedObject.handEdited), never adopted
// here: a read is a read.
type objectFiles struct {
	*layout
	journal *journal
	scheme  *runtime.Scheme
	// objectReads counts the object files that large lists and the
	// hand-edit scan read (see stamps.go).
	objectReads atomic.Uint64
	// stampSettle is how long ago a file must have changed to be stamped.
	stampSettle time.Duration
}

// headerPrefix and headerChecksum frame the first line of a store-written
// file: "# Managed by tether (resourceVersion N, sha256 HEX). ...".
const (
	headerPrefix   = "# Managed by tether (resourceVersion "
	headerChecksum = ", sha256 "
)

func fileHeader(rv uint64, body []byte) string {
	sum := sha256.Sum256(body)
	return fmt.Sprintf("# Managed by tether (resourceVersion %d, sha256 %s). Edits are picked up; the store rewrites this file.\n", rv, hex.EncodeToString(sum[:]))
}

func (s *objectFiles) writeObjectFile(path string, rv uint64, objJSON []byte) error {
	return s.writeObjectFileIf(path, rv, objJSON, nil)
}

func (s *objectFiles) writeObjectFileIf(path string, rv uint64, objJSON []byte, stillWanted func(replaced string) bool) error {
	body, err := yaml.JSONToYAML(objJSON)
	if err != nil {
		return err
	}
	tmp, done, err := s.writeTemp(path, append([]byte(fileHeader(rv, body)), body...))
	if err != nil {
		return err
	}
	defer done()
	defer tmp.Discard()
	return tmp.InstallIf(stillWanted)
}

// readHeaderRV returns the resourceVersion in a file's header when the
// header's checksum matches the content, that is when the store wrote it.
func (s *objectFiles) readHeaderRV(path string) (uint64, bool) {
	data, err := s.readRegular(path)
	if err != nil {
		return 0, false
	}
	rv, _, ok := parseHeader(data)
	return rv, ok
}

// parseHeader splits a store file into its resourceVersion and body. ok
// is true when the header is the store's and its checksum matches the
// body; otherwise body is data after a header of the store's form, or all
// of data. It reads the line by hand: it runs for every file a list reads,
// and a regular expression cost more than the checksum.
func parseHeader(data []byte) (rv uint64, body []byte, ok bool) {
	line, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || !bytes.HasPrefix(line, []byte(headerPrefix)) {
		return 0, data, false
	}
	digits, line, found := bytes.Cut(line[len(headerPrefix):], []byte(headerChecksum))
	if !found || len(digits) == 0 || bytes.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) ||
		len(line) < sha256.Size*2+2 || string(line[sha256.Size*2:sha256.Size*2+2]) != ")." {
		return 0, data, false
	}
	sum := line[:sha256.Size*2]
	if bytes.ContainsFunc(sum, func(r rune) bool { return (r < '0' || r > '9') && (r < 'a' || r > 'f') }) {
		return 0, data, false
	}
	want := sha256.Sum256(rest)
	if hex.EncodeToString(want[:]) != string(sum) {
		return 0, rest, false
	}
	rv, err := strconv.ParseUint(string(digits), 10, 64)
	return rv, rest, err == nil
}

// storedObject is an object as read from its file.
type storedObject struct {
	obj *unstructured.Unstructured
	// typed holds the object instead of obj when a list asked for its Go
	// type and could decode it so straight from the journal's JSON.
	typed client.Object
	// handEdited is true when the file was not written by the store.
	handEdited bool
	// slot is 1 + the index of the list's item slot that typed is, or 0.
	slot int
	// transformed is set once the list's Transform has changed typed.
	transformed bool
	// unmentioned marks an object a list left out undecoded, its JSON not
	// holding what the list was to mention.
	unmentioned bool
}

// object returns the object's metadata, whichever form it was read in.
func (so *storedObject) object() metav1.Object {
	if so.typed != nil {
		return so.typed
	}
	return so.obj
}

// FileError is a store file that cannot be read as a valid object. It names
// the file and, when known, the line.
type FileError struct {
	// Path is the file.
	Path string
	// Line is the one-based line of the problem; 0 when unknown.
	Line int
	// Err is the problem.
	Err error
}

func (e *FileError) Error() string {
	var ee *EntryError
	if errors.As(e.Err, &ee) && ee.Path == e.Path {
		return ee.Error()
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

var yamlLine = regexp.MustCompile(`line (\d+)`)

// readObjectFile reads and decodes one object file.
func (s *objectFiles) readObjectFile(path string) (*storedObject, error) {
	data, err := s.readRegular(path)
	if err != nil {
		return nil, asFileError(path, err)
	}
	return s.decodeObjectFile(path, data)
}

// asFileError makes an entry the store refuses to read a *FileError, which
// the hand-edit layer treats as a refused edit: skipped, reported, and the
// last valid version kept in effect.
func asFileError(path string, err error) error {
	var ee *EntryError
	if errors.As(err, &ee) {
		return &FileError{Path: path, Err: ee}
	}
	return err
}

// readObjectFileStat is readObjectFile that also returns the identity of
// the file it read, taken from the same open file: a stat of the path and
// a read of it are two lookups, and a save landing between them would pair
// one file's identity with another's content. The file stays open until
// the caller closes it, so that its inode, which identifies it, cannot be
// reused by a later save meanwhile.
func (s *objectFiles) readObjectFileStat(path string) (*storedObject, os.FileInfo, *os.File, error) {
	f, fi, err := s.openRegular(path)
	if err != nil {
		return nil, nil, nil, asFileError(path, err)
	}
	data, err := readAllSized(f, fi)
	if err != nil {
		_ = f.Close()
		return nil, nil, nil, asFileError(path, err)
	}
	so, err := s.decodeObjectFile(path, data)
	return so, fi, f, err
}

// decodeObjectFile decodes the content data of the store file at path.
func (s *objectFiles) decodeObjectFile(path string, data []byte) (*storedObject, error) {
	rv, body, ok := parseHeader(data)
	if ok {
		if obj := s.fromJournal(path, rv); obj != nil {
			return &storedObject{obj: obj}, nil
		}
	}
	offset := strings.Count(string(data[:len(data)-len(body)]), "\n")
	js, err := yaml.YAMLToJSONStrict(body)
	if err != nil {
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			line += offset
			// The error's own line counts from below the header; the
			// FileError gives the file's.
			err = errors.New(strings.Replace(err.Error(), m[0]+": ", "", 1))
		}
		return nil, &FileError{Path: path, Line: line, Err: err}
	}
	var content map[string]interface{}
	if err := utiljson.Unmarshal(js, &content); err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if content == nil {
		return nil, &FileError{Path: path, Err: errors.New("the file holds no object")}
	}
	obj := &unstructured.Unstructured{Object: content}
	// A file copied to another name keeps a valid header; its path no
	// longer matches its metadata, which makes it a hand edit all the same.
	if _, ns, name, inStore := s.keyOfPath(path); inStore && (obj.GetName() != name || obj.GetNamespace() != ns) {
		ok = false
	}
	return &storedObject{obj: obj, handEdited: !ok}, nil
}

// fromJournal decodes the object of a store-written file at path with
// resourceVersion rv from a journal entry this process appended or read
// last, when that entry is this very version of this object: the store
// wrote the file from the entry's JSON, so decoding that JSON gives the
// same object as parsing the file's YAML, several times faster. This is
// the common case of reading an object just written, as an update after a
// create, a status update or a reconcile after its own write does, even
// when other objects were written since. It returns nil otherwise.
func (s *objectFiles) fromJournal(path string, rv uint64) *unstructured.Unstructured {
	r, ns, name, ok := s.keyOfPath(path)
	if !ok {
		return nil
	}
	isThisVersion := func(e *entry) bool {
		return e != nil && e.RV == rv && e.Type != Deleted && e.Resource == r.plural && e.Namespace == ns && e.Name == name
	}
	e := s.journal.rememberedTail()
	if !isThisVersion(e) {
		e = s.journal.recentEntry(r.plural, ns, name)
	}
	if !isThisVersion(e) {
		return nil
	}
	var content map[string]interface{}
	if err := utiljson.Unmarshal(e.Object, &content); err != nil || content == nil {
		return nil
	}
	obj := &unstructured.Unstructured{Object: content}
	if obj.GetName() != name || obj.GetNamespace() != ns {
		return nil
	}
	return obj
}

// read reads one object under the shared lock: a writer's journal entry
// reaches watchers before its rename, and a reader acting on a watch event
// must not then read the version before it. It never writes: a file
// holding a hand edit comes back as such (storedObject.handEdited).
func (s *objectFiles) read(r *resource, namespace, name string) (*storedObject, error) {
	var so *storedObject
	err := s.withReadLock(func() error {
		var err error
		so, err = s.get(r, namespace, name)
		return err
	})
	return so, err
}

// lastValid returns the newest journal entry's object for a key (see
// journal.lastValid): the last valid version, which a refused edit falls
// back to.
func (s *objectFiles) lastValid(r *resource, namespace, name string) (*unstructured.Unstructured, error) {
	return s.journal.lastValid(r, namespace, name)
}

// get reads one object. The caller may hold either lock, or none: renames
// are atomic, so a reader never sees a torn file.
func (s *objectFiles) get(r *resource, namespace, name string) (*storedObject, error) {
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	so, err := s.readObjectFile(s.objectPath(r, namespace, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	return so, err
}

// storeWritten tells whether the file at path was written by the store and
// not edited since.
func (s *objectFiles) storeWritten(path string) bool {
	_, ok := s.readHeaderRV(path)
	return ok
}

// maxHeaderRV returns the largest resourceVersion in the headers of the
// store's object files, counting only headers whose checksum holds.
func (s *objectFiles) maxHeaderRV() uint64 {
	var top uint64
	for plural := range s.byPlural {
		root := filepath.Join(s.dir, plural)
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, fileSuffix) {
				return nil
			}
			if rv, ok := s.readHeaderRV(path); ok {
				top = max(top, rv)
			}
			return nil
		})
	}
	return top
}

// needsAdoption tells, without taking a lock, whether a file may hold a
// hand edit, so that a scan of a large store only locks for those.
func (s *objectFiles) needsAdoption(path string) bool {
	s.objectReads.Add(1)
	data, err := s.readRegular(path)
	if err != nil {
		return true
	}
	if _, body, ok := parseHeader(data); ok {
		if _, ns, name, inStore := s.keyOfPath(path); inStore && storeFormNames(body, ns, name) {
			return false
		}
	}
	so, err := s.decodeObjectFile(path, data)
	return err != nil || so.handEdited
}

// storeFormNames tells, without parsing the YAML, whether body (the
// content of a file whose header checksum matches, so in the store's own
// form) names the object namespace/name: the file then holds no hand edit,
// as decodeObjectFile would find at several times the cost, which a scan
// of every file at start-up pays for each. In the store's form metadata's
// own fields are the lines indented by exactly two spaces below the
// unindented "metadata:" line. Anything else (a field missing or repeated,
// a value that is not the plain name) answers false, and the caller
// decodes the file.
func storeFormNames(body []byte, namespace, name string) bool {
	var gotName, gotNamespace int
	inMetadata := false
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if len(line) > 0 && line[0] != ' ' {
			inMetadata = string(line) == "metadata:"
			continue
		}
		if !inMetadata || len(line) < 3 || line[1] != ' ' || line[2] == ' ' {
			continue
		}
		switch key, value, _ := strings.Cut(string(line[2:]), ": "); key {
		case "name", "name:":
			gotName++
			if value != name || !plainName(value) {
				return false
			}
		case "namespace", "namespace:":
			gotNamespace++
			if value != namespace || !plainName(value) {
				return false
			}
		}
	}
	return gotName == 1 && (namespace == "" && gotNamespace == 0 || namespace != "" && gotNamespace == 1)
}

// plainName tells whether s, written unquoted, is read back by YAML as the
// string s: a DNS name that YAML does not take for a number, a bool or null.
// A name that begins with a lowercase letter and is none of YAML 1.1's
// lowercase bool and null words is one; the rest are asked of the YAML
// decoder, which costs more than the rest of a start-up scan's check.
func plainName(s string) bool {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' && !slices.Contains(yamlWords, s) &&
		!strings.ContainsFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.' }) {
		return true
	}
	return yamlReadsAsItself(s)
}

// yamlReadsAsItself tells whether the YAML decoder reads s, unquoted, as
// the string s.
func yamlReadsAsItself(s string) bool {
	var v interface{}
	if err := yamlv2.Unmarshal([]byte(s), &v); err != nil {
		return false
	}
	got, ok := v.(string)
	return ok && got == s
}

// yamlWords are the lowercase plain scalars YAML 1.1 reads as a bool or null.
var yamlWords = []string{"y", "yes", "n", "no", "on", "off", "true", "false", "null"}

// sortedByKey sorts objects by namespace and name. The keys are read once:
// reading them through an unstructured object's accessors in each
// comparison cost more than the rest of a large list's sorting.
func sortedByKey(objs []*storedObject) []*storedObject {
	type keyed struct {
		namespace, name string
		so              *storedObject
	}
	keys := make([]keyed, len(objs))
	for i, so := range objs {
		o := so.object()
		keys[i] = keyed{o.GetNamespace(), o.GetName(), so}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		return cmp.Or(strings.Compare(a.namespace, b.namespace), strings.Compare(a.name, b.name))
	})
	for i, k := range keys {
		objs[i] = k.so
	}
	return objs
}

// objectYAML returns the YAML form of an object file's content: exactly
// yaml.JSONToYAML(objJSON), where objJSON is obj's JSON.
//
// JSONToYAML parses the JSON back into a tree and encodes that tree, and
// the parse costs as much as the encoding. When obj holds only what JSON
// decodes to as the same YAML tree (maps with string keys, lists, valid
// UTF-8 strings, int64, bools and nulls), the same encoder gives the same
// bytes from obj directly, in half the time. yamlenc writes those bytes
// without the encoder's reflection and event queue when obj is within
// what it covers (printable ASCII text: nearly every object), a subset of
// that case, so it is tried first. Floats are left to JSONToYAML: an
// integral float64 is written as an integer in JSON, and the two paths
// would then format it differently.
func objectYAML(obj map[string]interface{}, objJSON []byte) ([]byte, error) {
	if body, ok := yamlenc.Encode(obj); ok {
		return body, nil
	}
	if sameAsFromJSON(obj) {
		return yamlv2.Marshal(obj)
	}
	return yaml.JSONToYAML(objJSON)
}

// sameAsFromJSON tells whether v is a tree that decoding its JSON as YAML
// would give back, up to the map type, which the encoder treats alike.
func sameAsFromJSON(v interface{}) bool {
	switch v := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return plainText(v)
	case map[string]interface{}:
		for k, e := range v {
			if !plainText(k) || !sameAsFromJSON(e) {
				return false
			}
		}
		return true
	case []interface{}:
		for _, e := range v {
			if !sameAsFromJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// plainText tells whether s is valid UTF-8 without the characters that
// JSON leaves unescaped and YAML refuses to read: DEL, the C1 controls
// (U+0080 to U+009F, NEL among them) and the noncharacters U+FFFE and
// U+FFFF. JSONToYAML fails on those, or changes them; objectYAML leaves
// such strings to it. (C0 controls are fine: JSON escapes them.)
func plainText(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r <= 0x9f || r == 0xfffe || r == 0xffff {
			return false
		}
		i += n
	}
	return true
}

// encodedObject is an object's journal JSON and file YAML encoded before
// the write lock, when its resourceVersion is not known yet: both hold
// rvPlaceholder, once, where the resourceVersion goes.
type encodedObject struct {
	json, yaml []byte
}

// rvPlaceholder stands for the resourceVersion in an encodedObject. Its
// random part keeps it out of any object's content (an object holding it
// anyway is encoded under the lock: see encodeAhead); it is plain text in
// YAML, where a resourceVersion is a quoted string.
var rvPlaceholder = func() []byte {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return []byte("tether-rv-" + hex.EncodeToString(b))
}()

// encodeAhead encodes obj, as stage would, with rvPlaceholder for its
// resourceVersion. It returns nil when the placeholder does not appear
// exactly once in each encoding.
func encodeAhead(obj *unstructured.Unstructured) *encodedObject {
	rv := obj.GetResourceVersion()
	obj.SetResourceVersion(string(rvPlaceholder))
	defer obj.SetResourceVersion(rv)
	js, err := obj.MarshalJSON()
	if err != nil || bytes.Count(js, rvPlaceholder) != 1 {
		return nil
	}
	body, err := objectYAML(obj.Object, js)
	if err != nil || bytes.Count(body, rvPlaceholder) != 1 {
		return nil
	}
	return &encodedObject{json: js, yaml: body}
}

// encodeAheadFrom is encodeAhead given js, obj.MarshalJSON's bytes: the
// JSON is js with its resourceVersion replaced, when that field's text
// occurs in js exactly once, and is encoded again otherwise.
func encodeAheadFrom(obj *unstructured.Unstructured, js []byte) *encodedObject {
	field := func(v string) []byte { return []byte(`"resourceVersion":` + strconv.Quote(v)) }
	rvField := field(obj.GetResourceVersion())
	if obj.GetResourceVersion() == "" || bytes.Count(js, rvField) != 1 || bytes.Contains(js, rvPlaceholder) {
		return encodeAhead(obj)
	}
	rv := obj.GetResourceVersion()
	obj.SetResourceVersion(string(rvPlaceholder))
	defer obj.SetResourceVersion(rv)
	open := bytes.Replace(js, rvField, field(string(rvPlaceholder)), 1)
	body, err := objectYAML(obj.Object, open)
	if err != nil || bytes.Count(body, rvPlaceholder) != 1 {
		return nil
	}
	return &encodedObject{json: open, yaml: body}
}

// with returns the JSON and YAML of the object at resourceVersion rv: the
// bytes obj.MarshalJSON and objectYAML give for it.
func (e *encodedObject) with(rv uint64) (js, body []byte) {
	v := strconv.FormatUint(rv, 10)
	return bytes.Replace(e.json, rvPlaceholder, []byte(v), 1), bytes.Replace(e.yaml, rvPlaceholder, []byte(strconv.Quote(v)), 1)
}

// contentWithout returns the JSON of obj without the named top-level fields.
func contentWithout(obj *unstructured.Unstructured, drop ...string) []byte {
	m := make(map[string]interface{}, len(obj.Object))
	for k, v := range obj.Object {
		if !slices.Contains(drop, k) {
			m[k] = v
		}
	}
	js, _ := json.Marshal(m)
	return js
}

func sameContent(a, b *unstructured.Unstructured) bool {
	return bytes.Equal(contentWithout(a), contentWithout(b))
}

// sameContentAs is sameContent(a, b) given js, b.MarshalJSON's bytes.
func sameContentAs(a *unstructured.Unstructured, js []byte) bool {
	return bytes.Equal(append(contentWithout(a), '\n'), js)
}

func finalizerErrors(old, next *unstructured.Unstructured) field.ErrorList {
	if old.GetDeletionTimestamp() == nil {
		return nil
	}
	var added []string
	for _, f := range next.GetFinalizers() {
		if !slices.Contains(old.GetFinalizers(), f) {
			added = append(added, f)
		}
	}
	if len(added) == 0 {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "finalizers"),
		fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added))}
}
