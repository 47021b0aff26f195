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
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fileOrder reads the layer table of doc.go's package comment: the rows
// "NAME  FILE.go FILE.go ..." after its "# Layers" heading, bottom up. It
// returns each file's place in the whole order and its layer's name.
func fileOrder(t *testing.T, fset *token.FileSet) (map[string]int, map[string]string) {
	t.Helper()
	doc, err := parser.ParseFile(fset, "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	place, layer := map[string]int{}, map[string]string{}
	_, table, ok := strings.Cut(doc.Doc.Text(), "Layers\n")
	if !ok {
		t.Fatal(`doc.go's package comment has no "# Layers" section`)
	}
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasSuffix(fields[1], ".go") {
			continue
		}
		for _, f := range fields[1:] {
			if _, dup := place[f]; dup {
				t.Errorf("doc.go lists %s twice", f)
			}
			place[f], layer[f] = len(place), fields[0]
		}
	}
	return place, layer
}

// sourceOnly imports every package as an empty one: the check needs only
// what the package itself defines, and type-checks its files without
// compiling a dependency.
type sourceOnly map[string]*types.Package

func (s sourceOnly) Import(importPath string) (*types.Package, error) {
	if p, ok := s[importPath]; ok {
		return p, nil
	}
	name := path.Base(importPath)
	if len(name) <= 3 && strings.HasPrefix(name, "v") { // a major version
		name = path.Base(path.Dir(importPath))
	}
	p := types.NewPackage(importPath, strings.ReplaceAll(name, "-", ""))
	p.MarkComplete()
	s[importPath] = p
	return p, nil
}

// TestFilesCallOnlyDownward checks the order of doc.go's layer table: no
// non-test file references an identifier (a type, function, method, field,
// constant or variable) defined in a file after it, so that every
// file-level arrow of the package runs downward, and every file is listed.
func TestFilesCallOnlyDownward(t *testing.T) {
	fset := token.NewFileSet()
	place, layer := fileOrder(t, fset)
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		if _, ok := place[name]; !ok {
			t.Errorf("%s is in no layer of doc.go's table", name)
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for name := range place {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("doc.go lists %s, which is not in the package", name)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	// Errors are expected (the imports are empty); what the package
	// defines resolves all the same.
	conf := types.Config{Importer: sourceOnly{}, Error: func(error) {}}
	pkg, _ := conf.Check("filestore", fset, files, info)
	if pkg == nil {
		t.Fatal("the package does not type-check")
	}
	upward := map[string][]string{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if place[to] <= place[from] {
			continue
		}
		arrow := from + " (" + layer[from] + ") -> " + to + " (" + layer[to] + ")"
		if !slices.Contains(upward[arrow], obj.Name()) {
			upward[arrow] = append(upward[arrow], obj.Name())
		}
	}
	arrows := make([]string, 0, len(upward))
	for arrow := range upward {
		arrows = append(arrows, arrow)
	}
	slices.Sort(arrows)
	for _, arrow := range arrows {
		slices.Sort(upward[arrow])
		t.Errorf("%s runs upward: %s", arrow, strings.Join(upward[arrow], ", "))
	}
}
