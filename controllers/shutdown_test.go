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

package controllers

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestQuietAtShutdown(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "agents.tether.dev", Resource: "workers"}, "w")
	later := reconcile.Result{RequeueAfter: time.Minute}
	cases := []struct {
		name     string
		cancel   bool
		res      reconcile.Result
		err      error
		wantRes  reconcile.Result
		wantFail bool
	}{
		{name: "an error while running is reported", err: notFound, res: later, wantRes: later, wantFail: true},
		{name: "success while running keeps its result", res: later, wantRes: later},
		{name: "an error at shutdown is not", cancel: true, err: notFound, res: later},
		{name: "a cancelled read at shutdown is not", cancel: true, err: context.Canceled},
		{name: "success at shutdown keeps its result", cancel: true, res: later, wantRes: later},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inner := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
				if c.cancel {
					cancel()
				}
				return c.res, c.err
			})
			res, err := quietAtShutdown(inner).Reconcile(ctx, reconcile.Request{})
			if (err != nil) != c.wantFail || (err != nil && !errors.Is(err, c.err)) || res != c.wantRes {
				t.Fatalf("got %+v, %v; want %+v, error %t", res, err, c.wantRes, c.wantFail)
			}
		})
	}
}

// TestEveryControllerCompletesQuietly holds every controller of the
// package to complete(): a builder completed directly would report the
// reconciles its shutdown cuts short as failures.
func TestEveryControllerCompletesQuietly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	registered := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if ok && fn.Name.Name == "complete" && fn.Recv == nil {
				return false
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fun := call.Fun.(type) {
			case *ast.SelectorExpr:
				if fun.Sel.Name == "Complete" || fun.Sel.Name == "Build" {
					t.Errorf("%s: a controller built with %s, not complete()", fset.Position(call.Pos()), fun.Sel.Name)
				}
			case *ast.Ident:
				if fun.Name == "complete" {
					registered++
				}
			}
			return true
		})
	}
	if registered < 6 {
		t.Errorf("%d controllers complete through complete(); want the package's 6 at least", registered)
	}
}
