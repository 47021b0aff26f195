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

package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tether-dev/tether/internal/kubectl/apply"
)

type applyOptions struct {
	files     []string
	recursive bool
	dryRun    string
	validate  string
}

func newApplyCommand(g *GlobalOptions) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Create or update objects from YAML files, a directory or stdin",
		Long: `Create or update objects from multi-document YAML, as kubectl apply does.

The configuration applied is kept in the kubectl.kubernetes.io/last-applied-configuration
annotation and merged three ways with the live object, so fields that the
reconcilers, agents or other people set are kept unless the file changes them.
A file with one bad document applies nothing. The files are only read.`,
		Example: `  tether apply -f task.yaml
  tether apply -R -f tasks/
  cat task.yaml | tether apply -f -
  tether apply -f task.yaml --dry-run=server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, g)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVarP(&o.files, "filename", "f", nil, "file, directory or - (stdin) holding the configuration to apply; repeatable")
	fs.BoolVarP(&o.recursive, "recursive", "R", false, "process the directories given with -f recursively")
	fs.StringVar(&o.dryRun, "dry-run", "none", `"none", "client" (compute the result, send nothing) or "server" (the backend validates and stores nothing)`)
	fs.Lookup("dry-run").NoOptDefVal = string(apply.DryRunClient)
	fs.StringVar(&o.validate, "validate", "strict", `field validation; "strict" (or "true"): unknown or duplicate fields are errors`)
	return cmd
}

// errNoObjects is kubectl's error for files that hold no object at all
// (empty, or only comments and document separators).
var errNoObjects = errors.New("no objects passed to apply")

// dryRunSuffix is what kubectl appends to a result line in a dry run.
func dryRunSuffix(d apply.DryRun) string {
	switch d {
	case apply.DryRunClient:
		return " (dry run)"
	case apply.DryRunServer:
		return " (server dry run)"
	}
	return ""
}

func (o *applyOptions) run(cmd *cobra.Command, g *GlobalOptions) error {
	if len(o.files) == 0 {
		return errors.New("must specify -f FILE|DIR|- (a file, a directory or stdin)")
	}
	dry, err := apply.ParseDryRun(o.dryRun)
	if err != nil {
		return fmt.Errorf("--dry-run: %w", err)
	}
	switch o.validate {
	case "strict", "true":
	default:
		return fmt.Errorf(`--validate: %q is not supported; tether always validates strictly ("strict")`, o.validate)
	}
	sources, err := apply.Read(o.files, o.recursive, cmd.InOrStdin())
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	b, err := g.Backend(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	a := &apply.Applier{Client: b.Client, Mapper: b.Mapper}
	opts := apply.Options{
		DryRun:           dry,
		FieldValidation:  metav1.FieldValidationStrict,
		Namespace:        b.Namespace,
		EnforceNamespace: *g.KubeConfig.Namespace != "",
	}
	var errs []error
	out := cmd.OutOrStdout()
	objects := 0
	for _, src := range sources {
		outcomes, err := a.ApplyFile(ctx, src, b.Scheme, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		objects += len(outcomes)
		for _, oc := range outcomes {
			if oc.Err != nil {
				errs = append(errs, oc.Err)
				continue
			}
			fmt.Fprintf(out, "%s %s%s\n", b.objectRef(oc.Object), oc.Result, dryRunSuffix(dry))
		}
	}
	if objects == 0 && len(errs) == 0 {
		return errNoObjects
	}
	return commandErrors(cmd.ErrOrStderr(), errs)
}

// objectRef names an object as kubectl does in result lines:
// hook.agents.tether.dev/NAME.
func (b *Backend) objectRef(u *unstructured.Unstructured) string {
	if rt, err := b.Types.ForGVK(u.GroupVersionKind()); err == nil {
		return rt.Qualified() + "/" + u.GetName()
	}
	gvk := u.GroupVersionKind()
	return strings.ToLower(gvk.Kind) + "." + gvk.Group + "/" + u.GetName()
}

// shownErrors is what a command returns after printing all but the last of
// several errors itself; main prints the last. Its exit code is that of its errors when they all
// agree, and a usage error's otherwise.
type shownErrors struct {
	errs []error
}

func (e *shownErrors) Error() string { return e.errs[len(e.errs)-1].Error() }

// Unwrap exposes the first error only when every error has the same exit
// code, so ExitCode gives 2 only when every failure was a conflict or a
// missing object.
func (e *shownErrors) Unwrap() error {
	want := ExitCode(e.errs[0])
	for _, err := range e.errs[1:] {
		if ExitCode(err) != want {
			return nil
		}
	}
	return e.errs[len(e.errs)-1]
}

// commandErrors prints all but the last of errs as kubectl prints each
// failure, and returns an error for main to print the last and exit with.
func commandErrors(w io.Writer, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	for _, err := range errs[:len(errs)-1] {
		fmt.Fprintln(w, "error:", err)
	}
	return &shownErrors{errs: errs}
}
