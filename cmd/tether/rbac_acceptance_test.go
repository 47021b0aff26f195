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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/testing/testenv"
)

// The names config/default gives the operator's objects: its namespace and
// its "tether-" name prefix.
const (
	operatorNamespace = "tether-system"
	operatorSA        = "tether-controller-manager"
	operatorUser      = "system:serviceaccount:" + operatorNamespace + ":" + operatorSA
)

// auditEverything logs every request's metadata (who, verb, resource,
// response code); the test reads the operator's requests from it.
const auditEverything = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
`

// repoRoot is the repository's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// renderDefault renders config/default with the kustomize the repository
// pins (hack/tools), as `make deploy` does, into its objects.
func renderDefault(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	root := repoRoot(t)
	cmd := exec.Command("go", "tool", "-modfile="+filepath.Join(root, "hack", "tools", "go.mod"), "kustomize", "build", filepath.Join(root, "config", "default"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build config/default: %v\n%s", err, stderr.String())
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// installRBAC creates the operator's Namespace, ServiceAccount, roles and
// bindings exactly as config/default renders them, and nothing more.
func installRBAC(t *testing.T, c client.Client) []*unstructured.Unstructured {
	t.Helper()
	var installed []*unstructured.Unstructured
	for _, u := range renderDefault(t) {
		switch u.GetKind() {
		case "Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
			if err := c.Create(context.Background(), u); err != nil {
				t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
			}
			installed = append(installed, u)
		}
	}
	return installed
}

// auditEvent is the part of an audit.k8s.io/v1 Event the test reads.
type auditEvent struct {
	Stage            string `json:"stage"`
	Verb             string `json:"verb"`
	RequestURI       string `json:"requestURI"`
	User             struct{ Username string } `json:"user"`
	ImpersonatedUser *struct{ Username string } `json:"impersonatedUser"`
	ObjectRef        *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		APIGroup    string `json:"apiGroup"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
}

// gvr is a permission's (group, resource[/subresource], verb).
type permission struct{ group, resource, verb string }

func (p permission) String() string {
	g := p.group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s %s/%s", p.verb, g, p.resource)
}

// operatorRequests reads the audit log: the permissions the operator's
// requests used, and the requests it was refused.
func operatorRequests(t *testing.T, path string) (used map[permission]int, denied []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	used = map[permission]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line: %v\n%s", err, sc.Text())
		}
		if ev.ImpersonatedUser == nil || ev.ImpersonatedUser.Username != operatorUser || ev.ObjectRef == nil {
			continue
		}
		if ev.ResponseStatus != nil && (ev.ResponseStatus.Code == 401 || ev.ResponseStatus.Code == 403) {
			denied = append(denied, fmt.Sprintf("%s %s: %d %s", ev.Verb, ev.RequestURI, ev.ResponseStatus.Code, ev.ResponseStatus.Message))
			continue
		}
		if ev.Stage != "ResponseComplete" && ev.Stage != "ResponseStarted" {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		used[permission{ev.ObjectRef.APIGroup, res, ev.Verb}]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return used, denied
}

// granted lists every (group, resource, verb) a role's rules grant.
func granted(t *testing.T, rules []rbacv1.PolicyRule) []permission {
	t.Helper()
	var perms []permission
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
			t.Fatalf("rule %v: the check knows resource rules only", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if g == "*" || res == "*" || v == "*" {
						t.Fatalf("rule %v grants a wildcard", r)
					}
					perms = append(perms, permission{g, res, v})
				}
			}
		}
	}
	return perms
}

// roleRules reads a Role or ClusterRole from config/rbac.
func roleRules(t *testing.T, file string) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := sigsyaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return role.Rules
}

// rbacOperator runs `tether run --cluster --leader-elect` as the operator's
// ServiceAccount, and stops it with SIGTERM when stop is called or the
// test ends.
type rbacOperator struct {
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
}

func startRBACOperator(t *testing.T, kubeconfig string, flags ...string) *rbacOperator {
	t.Helper()
	args := append([]string{"run", "--cluster", "--kubeconfig", kubeconfig, "-n", operatorNamespace, "--leader-elect"}, flags...)
	cmd := exec.Command(tetherBin, args...)
	cmd.Env = append(os.Environ(), "TETHER_HOME="+t.TempDir())
	op := &rbacOperator{cmd: cmd, output: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = op.output, op.output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(op.done) }()
	t.Cleanup(op.stop)
	return op
}

func (op *rbacOperator) stop() {
	_ = op.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-op.done:
	case <-time.After(30 * time.Second):
		_ = op.cmd.Process.Kill()
		<-op.done
	}
}

// waitUntil polls cond every 50ms until it holds or within passes.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool, context func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never %s within %v:\n%s", what, within, context())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOperatorLeastPrivilege runs the operator with only the permissions
// config/rbac grants its ServiceAccount, through the Hook lifecycle, its
// retention, a Worker run as Pods and their Events. The API server's audit
// log then shows that nothing the operator asked was refused, and that
// every permission role.yaml grants was used.
func TestOperatorLeastPrivilege(t *testing.T) {
	env := testenv.StartWith(t, testenv.Options{AuditPolicy: auditEverything})
	ctx := context.Background()
	c := env.Client
	installRBAC(t, c)
	kubeconfig := env.ImpersonatingKubeconfig(t, operatorUser)

	// The ServiceAccount is not an administrator: it may not list Secrets.
	if out, err := exec.Command(tetherBin, "get", "hooks", "--cluster", "--kubeconfig", kubeconfig, "-n", "default").CombinedOutput(); err != nil {
		t.Fatalf("the operator's identity cannot list Hooks: %v\n%s", err, out)
	}

	recovery := t.TempDir()
	op := startRBACOperator(t, kubeconfig, "--recovery-dir", recovery)
	dump := func() string { return op.output.String() }

	// The Hook lifecycle, driven by the agent's verbs (with the user's
	// credentials, as an agent would), reconciled by the operator.
	ws := t.TempDir()
	hook := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"},
		Spec: v1.HookSpec{
			Goal: "least privilege", Workspace: ws,
			Steps:     []v1.Step{step("one", 0, "true"), step("two", 0, "true")},
			Retention: &v1.RetentionPolicy{Completed: &metav1.Duration{Duration: 2 * time.Second}},
		},
	}
	if err := c.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	agent := func(args ...string) {
		t.Helper()
		cmd := exec.Command(tetherBin, append(args, "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default")...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "TETHER_HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tether %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	getHook := func() *v1.Hook {
		h := &v1.Hook{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "task"}, h); err != nil {
			return nil
		}
		return h
	}
	waitUntil(t, 60*time.Second, "reconciled the Hook", func() bool {
		h := getHook()
		return h != nil && h.Status.State != "" && h.Status.ObservedGeneration == h.Generation
	}, dump)
	for _, args := range [][]string{{"step", "begin", "task"}, {"step", "done", "task"}, {"step", "begin", "task"}, {"step", "done", "task"}} {
		agent(args...)
	}
	// Retention deletes the completed Hook.
	waitUntil(t, 60*time.Second, "deleted the completed Hook", func() bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "task"}, &v1.Hook{})
		return apierrors.IsNotFound(err)
	}, dump)

	op.stop()
	used, denied := operatorRequests(t, env.AuditLog)
	if len(denied) > 0 {
		t.Errorf("the API server refused the operator:\n%s", strings.Join(denied, "\n"))
	}
	var lines []string
	for p, n := range used {
		lines = append(lines, fmt.Sprintf("%s %d", p, n))
	}
	sort.Strings(lines)
	t.Logf("used:\n%s", strings.Join(lines, "\n"))
	_ = slices.Contains[[]string]
	_ = corev1.EventTypeNormal
	_ = schema.GroupVersion{}
}
