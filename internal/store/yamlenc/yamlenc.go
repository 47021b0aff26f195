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

// Package yamlenc writes a JSON-shaped tree as YAML, byte for byte as
// yaml.v2's Marshal (and so sigs.k8s.io/yaml) writes it, without
// reflection and without the event queue yaml.v2 builds and grows for
// every document: in a store write that queue was a quarter of all the
// bytes allocated.
//
// It covers what an object file holds nearly always: maps with string
// keys, lists, int64, bools, nulls and strings of printable ASCII. For
// anything else Encode declines, and the caller uses yaml.v2. Within that
// set it follows yaml.v2's emitter step by step: the order of keys, the
// style of each scalar (plain, single- or double-quoted), the folding of
// long scalars at 80 columns and the indentation. FuzzEncode holds it to
// yaml.v2.
package yamlenc

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Encode returns v as yaml.v2's Marshal writes it, and true; or false when
// v holds something outside what this package covers (see the package
// comment).
func Encode(v map[string]interface{}) ([]byte, bool) {
	if !covered(v) {
		return nil, false
	}
	e := &emitter{buf: make([]byte, 0, 4096), indent: -1, whitespace: true, indention: true}
	e.node(v, false, true)
	// The document's end: a line break unless the line is empty.
	e.indent = -1
	e.writeIndent()
	return e.buf, true
}

// covered tells whether every part of v is of a type and content Encode
// writes itself.
func covered(v interface{}) bool {
	switch v := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return printableASCII(v)
	case map[string]interface{}:
		for k, e := range v {
			// A longer key is written as a complex key ("? key").
			if len(k) > maxSimpleKey || !printableASCII(k) || !covered(e) {
				return false
			}
		}
		return true
	case []interface{}:
		for _, e := range v {
			if !covered(e) {
				return false
			}
		}
		return true
	}
	return false
}

// maxSimpleKey is the longest key yaml.v2 writes as a simple key.
const maxSimpleKey = 128

// bestWidth is the column past which yaml.v2 folds a long scalar at a
// space; bestIndent is its indentation step.
const (
	bestWidth  = 80
	bestIndent = 2
)

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// emitter is the state of yaml.v2's emitter that a block document of
// covered values uses, with the same names.
type emitter struct {
	buf     []byte
	column  int
	indent  int
	indents []int
	// whitespace: the last character written was whitespace (or none);
	// indention: only indentation has been written on this line.
	whitespace, indention bool
}

func (e *emitter) put(c byte) {
	e.buf = append(e.buf, c)
	e.column++
}

func (e *emitter) putBreak() {
	e.buf = append(e.buf, '\n')
	e.column = 0
}

func (e *emitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace = true
	e.indention = true
}

func (e *emitter) writeIndicator(indicator string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	for i := 0; i < len(indicator); i++ {
		e.put(indicator[i])
	}
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

func (e *emitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = bestIndent
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += bestIndent
	}
}

func (e *emitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

// node writes v in the context yaml_emitter_emit_node is given:
// mapping tells whether v is a mapping's key or value, simpleKey whether it
// is a key.
func (e *emitter) node(v interface{}, simpleKey, mapping bool) {
	switch v := v.(type) {
	case map[string]interface{}:
		if len(v) == 0 {
			e.emptyFlow("{", "}")
			return
		}
		e.increaseIndent(false, false)
		for _, k := range sortedKeys(v) {
			e.writeIndent()
			e.node(k, true, true)
			e.writeIndicator(":", false, false, false)
			e.node(v[k], false, true)
		}
		e.popIndent()
	case []interface{}:
		if len(v) == 0 {
			e.emptyFlow("[", "]")
			return
		}
		e.increaseIndent(false, mapping && !e.indention)
		for _, item := range v {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			e.node(item, false, false)
		}
		e.popIndent()
	case string:
		style := plain
		if !canUsePlain(v) {
			style = doubleQuoted
		}
		e.scalar(v, style, simpleKey)
	case int64:
		e.scalar(strconv.FormatInt(v, 10), plain, simpleKey)
	case bool:
		e.scalar(strconv.FormatBool(v), plain, simpleKey)
	case nil:
		e.scalar("null", plain, simpleKey)
	}
}

// emptyFlow writes an empty mapping or sequence, which yaml.v2 writes in
// flow style.
func (e *emitter) emptyFlow(open, closing string) {
	e.writeIndicator(open, true, true, false)
	e.increaseIndent(true, false)
	e.popIndent()
	e.writeIndicator(closing, false, false, false)
}

type scalarStyle int

const (
	plain scalarStyle = iota
	singleQuoted
	doubleQuoted
)

func (e *emitter) scalar(value string, style scalarStyle, simpleKey bool) {
	blockPlainAllowed := blockPlainAllowed(value)
	if style == plain && (!blockPlainAllowed || value == "" && simpleKey) {
		style = singleQuoted
	}
	e.increaseIndent(true, false)
	allowBreaks := !simpleKey
	switch style {
	case plain:
		e.writePlain(value, allowBreaks)
	case singleQuoted:
		e.writeSingleQuoted(value, allowBreaks)
	default:
		e.writeDoubleQuoted(value, allowBreaks)
	}
	e.popIndent()
}

// blockPlainAllowed is yaml_emitter_analyze_scalar's block_plain_allowed
// for printable ASCII (no line breaks, no special characters).
func blockPlainAllowed(value string) bool {
	if value == "" {
		return true
	}
	if strings.HasPrefix(value, "---") || strings.HasPrefix(value, "...") {
		return false
	}
	if value[0] == ' ' || value[len(value)-1] == ' ' {
		return false
	}
	precededByWhitespace := true
	for i := 0; i < len(value); i++ {
		followedByWhitespace := i+1 >= len(value) || value[i+1] == ' '
		c := value[i]
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				return false
			case '?', ':', '-':
				if followedByWhitespace {
					return false
				}
			}
		} else {
			switch c {
			case ':':
				if followedByWhitespace {
					return false
				}
			case '#':
				if precededByWhitespace {
					return false
				}
			}
		}
		precededByWhitespace = c == ' '
	}
	return true
}

func (e *emitter) writePlain(value string, allowBreaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	spaces := false
	for i := 0; i < len(value); i++ {
		if value[i] == ' ' {
			if allowBreaks && !spaces && e.column > bestWidth && i+1 < len(value) && value[i+1] != ' ' {
				e.writeIndent()
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		e.put(value[i])
		e.indention = false
		spaces = false
	}
	e.whitespace = false
	e.indention = false
}

func (e *emitter) writeSingleQuoted(value string, allowBreaks bool) {
	e.writeIndicator("'", true, false, false)
	spaces := false
	for i := 0; i < len(value); i++ {
		if value[i] == ' ' {
			if allowBreaks && !spaces && e.column > bestWidth && i > 0 && i < len(value)-1 && value[i+1] != ' ' {
				e.writeIndent()
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		if value[i] == '\'' {
			e.put('\'')
		}
		e.put(value[i])
		e.indention = false
		spaces = false
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace = false
	e.indention = false
}

func (e *emitter) writeDoubleQuoted(value string, allowBreaks bool) {
	e.writeIndicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '"', '\\':
			e.put('\\')
			e.put(c)
			spaces = false
		case ' ':
			if allowBreaks && !spaces && e.column > bestWidth && i > 0 && i < len(value)-1 {
				e.writeIndent()
				if value[i+1] == ' ' {
					e.put('\\')
				}
			} else {
				e.put(' ')
			}
			spaces = true
		default:
			e.put(c)
			spaces = false
		}
	}
	e.writeIndicator(`"`, false, false, false)
	e.whitespace = false
	e.indention = false
}

// sortedKeys returns m's keys in yaml.v2's order (keyList.Less for
// strings): letters by code point, and runs of digits by their value.
func sortedKeys(m map[string]interface{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	return keys
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// keyLess is yaml.v2's keyList.Less for two ASCII strings.
func keyLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		al, bl := isLetter(a[i]), isLetter(b[i])
		if al && bl {
			return a[i] < b[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if a[i] == '0' || b[i] == '0' {
			for j := i - 1; j >= 0 && isDigit(a[j]); j-- {
				if a[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(a) && isDigit(a[ai]); ai++ {
			an = an*10 + int64(a[ai]-'0')
		}
		for bi = i; bi < len(b) && isDigit(b[bi]); bi++ {
			bn = bn*10 + int64(b[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

// canUsePlain is yaml.v2's stringv test: s read back as a plain scalar
// would be a string (resolve gives !!str), and is no base 60 float.
func canUsePlain(s string) bool {
	return resolvesToString(s) && !isBase60Float(s)
}

// resolvedNonString are the plain scalars yaml.v2's resolve maps to a bool,
// a null, a special float or a merge key (when their first character
// sends it to the table).
var resolvedNonString = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{
		"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
		"", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
		"<<",
	} {
		m[s] = true
	}
	return m
}()

var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// resolvesToString is yaml.v2's resolve("", s) == !!str.
func resolvesToString(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || isDigit(c):
		if resolvedNonString[s] {
			return false
		}
		if _, ok := parseTimestamp(s); ok {
			return false
		}
		plainNumber := strings.ReplaceAll(s, "_", "")
		if _, err := strconv.ParseInt(plainNumber, 0, 64); err == nil {
			return false
		}
		if _, err := strconv.ParseUint(plainNumber, 0, 64); err == nil {
			return false
		}
		if yamlStyleFloat.MatchString(plainNumber) {
			if _, err := strconv.ParseFloat(plainNumber, 64); err == nil {
				return false
			}
		}
		if strings.HasPrefix(plainNumber, "0b") {
			if _, err := strconv.ParseInt(plainNumber[2:], 2, 64); err == nil {
				return false
			}
			if _, err := strconv.ParseUint(plainNumber[2:], 2, 64); err == nil {
				return false
			}
		} else if strings.HasPrefix(plainNumber, "-0b") {
			if _, err := strconv.ParseInt("-"+plainNumber[3:], 2, 64); err == nil {
				return false
			}
		}
		return true
	case c == '.':
		if resolvedNonString[s] {
			return false
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return !resolvedNonString[s]
	}
	// yaml.v2 consults its table only for the first characters above, so
	// that even "<<", which the table holds, is a string.
	return true
}

var allowedTimestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// parseTimestamp is yaml.v2's: four digits and a dash, then one of its
// formats.
func parseTimestamp(s string) (time.Time, bool) {
	i := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return time.Time{}, false
	}
	for _, format := range allowedTimestampFormats {
		if t, err := time.Parse(format, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

var base60float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

func isBase60Float(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if c != '+' && c != '-' && !isDigit(c) || strings.IndexByte(s, ':') < 0 {
		return false
	}
	return base60float.MatchString(s)
}
