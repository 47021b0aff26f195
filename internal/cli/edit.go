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
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/internal/kubectl/manifest"
)

// editHeader is kubectl's preamble for the file opened in the editor.
const editHeader = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

// EditorEnvs are the environment variables naming the editor, in order of
// preference, as for kubectl; vi is the fallback.
var EditorEnvs = []string{"KUBE_EDITOR", "EDITOR"}

func newEditCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "edit TYPE NAME | TYPE/NAME",
		Short: "Edit an object in $KUBE_EDITOR or $EDITOR",
		Long: `Open an object as YAML in an editor and save the result, as kubectl edit does.

The editor is $KUBE_EDITOR, else $EDITOR, else vi. The object is updated only
if nobody changed it while it was open (resourceVersion check); otherwise the
edit fails with exit code 2 and the edited copy is kept. An edit the store
rejects reopens the editor with the error on top. Status cannot be edited.`,
		Example: `  tether edit hook fix-login
  EDITOR=nano tether edit hk/fix-login`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEdit(cmd, g, args)
		},
	}
}

func editorCommand() string {
	for _, env := range EditorEnvs {
		if e := strings.TrimSpace(os.Getenv(env)); e != "" {
			return e
		}
	}
	return "vi"
}

// stripComments drops the lines that start with '#', as kubectl does
// before it reads an edited file.
func stripComments(data []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

func commentLines(msg string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	return b.String()
}

func runEdit(cmd *cobra.Command, g *GlobalOptions, args []string) error {
	ctx := cmd.Context()
	b, err := g.Backend(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	targets, err := b.Types.ParseTargets(args)
	if err != nil {
		return err
	}
	if len(targets) != 1 || len(targets[0].Names) != 1 || targets[0].Type.CRD == nil {
		return errors.New("edit takes exactly one object: TYPE NAME or TYPE/NAME, of type hook, worker or checkpoint")
	}
	rt, name := targets[0].Type, targets[0].Names[0]
	orig := &unstructured.Unstructured{}
	orig.SetGroupVersionKind(rt.GVK)
	if err := b.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, orig); err != nil {
		return err
	}
	// As kubectl edit does by default, managedFields are hidden; an update
	// without them leaves the server's untouched.
	orig.SetManagedFields(nil)
	body, err := yaml.Marshal(orig.Object)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "tether-edit-*.yaml")
	if err != nil {
		return err
	}
	path := f.Name()
	_ = f.Close()
	keep := false
	defer func() {
		if !keep {
			_ = os.Remove(path)
		}
	}()

	content := body
	header := editHeader
	var lastInvalid []byte
	for {
		if err := os.WriteFile(path, append([]byte(header), content...), 0o600); err != nil {
			return err
		}
		editor := exec.CommandContext(ctx, "sh", "-c", editorCommand()+` "$1"`, "sh", path)
		editor.Stdin, editor.Stdout, editor.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		if err := editor.Run(); err != nil {
			return fmt.Errorf("running the editor %q: %w", editorCommand(), err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		edited := stripComments(raw)
		if len(bytes.TrimSpace(edited)) == 0 {
			fmt.Fprintln(cmd.OutOrStdout(), "Edit cancelled, saved file was empty.")
			return nil
		}
		if bytes.Equal(bytes.TrimSpace(edited), bytes.TrimSpace(body)) {
			fmt.Fprintln(cmd.OutOrStdout(), "Edit cancelled, no changes made.")
			return nil
		}
		if lastInvalid != nil && bytes.Equal(edited, lastInvalid) {
			keep = true
			return fmt.Errorf("edit cancelled, no valid changes were saved; your edits are in %s", path)
		}
		updated, invalid := decodeEdit(path, edited, b, orig)
		if invalid == nil {
			if reflect.DeepEqual(withoutStatus(updated), withoutStatus(orig)) {
				fmt.Fprintln(cmd.OutOrStdout(), "Edit cancelled, no changes made.")
				return nil
			}
			err = b.Client.Update(ctx, updated)
			switch {
			case err == nil:
				fmt.Fprintf(cmd.OutOrStdout(), "%s/%s edited\n", rt.Qualified(), name)
				return nil
			case apierrors.IsConflict(err):
				keep = true
				if werr := os.WriteFile(path, raw, 0o600); werr != nil {
					return werr
				}
				return fmt.Errorf("%s %q was changed after it was opened for editing; your edits are in %s; run edit again and reapply them: %w",
					rt.GroupResource(), name, path, err)
			case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
				invalid = err
			default:
				keep = true
				return fmt.Errorf("%w; your edits are in %s", err, path)
			}
		}
		lastInvalid = edited
		content = edited
		header = editHeader + commentLines(fmt.Sprintf("%s %q was not valid:\n* %v", rt.GroupResource(), name, invalid)) + "#\n"
	}
}

// decodeEdit reads the edited YAML strictly and checks that it still names
// the object being edited. A problem comes back as the second result, to be
// shown to the user in the reopened editor.
func decodeEdit(path string, edited []byte, b *Backend, orig *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := sameType(path, edited, orig); err != nil {
		return nil, err
	}
	docs, err := manifest.Decode(path, edited, b.Scheme)
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("the edited file must hold exactly one object, found %d", len(docs))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(docs[0].JSON); err != nil {
		return nil, err
	}
	switch {
	case u.GroupVersionKind() != orig.GroupVersionKind():
		return nil, fmt.Errorf("apiVersion and kind cannot be changed: %s", u.GroupVersionKind())
	case u.GetName() != orig.GetName():
		return nil, fmt.Errorf("metadata.name: the name cannot be changed (was %q)", orig.GetName())
	case u.GetNamespace() != orig.GetNamespace():
		return nil, fmt.Errorf("metadata.namespace: the namespace cannot be changed (was %q)", orig.GetNamespace())
	}
	return u, nil
}

// sameType refuses an edit that changes apiVersion or kind before the strict
// decode, which would otherwise report every field as unknown to the new kind.
func sameType(path string, edited []byte, orig *unstructured.Unstructured) error {
	var tm struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if yaml.Unmarshal(edited, &tm) != nil {
		return nil // the strict decode reports the syntax error, with its line
	}
	for _, f := range []struct {
		field string
		got   any
		was   string
	}{{"kind", tm.Kind, orig.GetKind()}, {"apiVersion", tm.APIVersion, orig.GetAPIVersion()}} {
		if s, ok := f.got.(string); ok && s != f.was {
			line := manifest.FieldLine(edited, f.field)
			return fmt.Errorf("%s:%d: %s: the %s of an object cannot be changed (was %q, now %q)", path, line, f.field, f.field, f.was, s)
		}
	}
	return nil
}

func withoutStatus(u *unstructured.Unstructured) map[string]any {
	m := u.DeepCopy().Object
	delete(m, "status")
	return m
}
