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
	"maps"
	"testing"
)

// FuzzDecodeStamps decodes arbitrary stamps files: it must never panic,
// must take nothing from a file whose checksum does not hold, and what it
// takes must encode back to a file that decodes to the same stamps.
func FuzzDecodeStamps(f *testing.F) {
	valid := encodeStamps(stampSet{
		"default/h-000": {rv: 12, ino: 131073, size: 412, ctime: 1764175000123456789},
		"team/b":        {rv: 13, ino: 131074, size: 1, ctime: 1},
		"/cluster-wide": {rv: 14, ino: 9, size: 2, ctime: 3},
	})
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(encodeStamps(stampSet{}))
	f.Add([]byte(stampsHeader + "default/a 1 2 3 4\n" + stampsTrailer + "00\n"))
	f.Add([]byte(stampsHeader + "default/a 1 2 3\nx y\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set := decodeStamps(data)
		if len(set) > 0 && !bytes.Equal(encodeStamps(set), data) {
			// Only lines the encoder could have written survive, in any
			// order, with the checksum over the whole file holding.
			again := decodeStamps(encodeStamps(set))
			if !maps.Equal(again, set) {
				t.Fatalf("stamps %v encode to a file that decodes to %v", set, again)
			}
		}
		if i := bytes.LastIndex(data, []byte(stampsTrailer)); i > 0 && len(set) > 0 {
			tampered := bytes.Clone(data)
			tampered[i-2] ^= 1
			if got := decodeStamps(tampered); len(got) > 0 && !bytes.Equal(tampered, data) {
				t.Fatalf("a file changed without its checksum decoded to %v", got)
			}
		}
	})
}

// TestStampsRoundTrip checks that stamps encode and decode unchanged, and
// that a stamps file read with anything changed in it yields nothing.
func TestStampsRoundTrip(t *testing.T) {
	set := stampSet{"default/a": {rv: 1, ino: 2, size: 3, ctime: 4}, "/b": {rv: 5, ino: 6, size: 7, ctime: 1 << 61}}
	data := encodeStamps(set)
	if got := decodeStamps(data); !maps.Equal(got, set) {
		t.Fatalf("decoded %v, want %v", got, set)
	}
	for i := range data {
		changed := bytes.Clone(data)
		changed[i] ^= 0x04
		if got := decodeStamps(changed); len(got) > 0 {
			t.Fatalf("with byte %d changed, decoded %v", i, got)
		}
	}
}
