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
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/controllers"
	"github.com/tether-dev/tether/internal/config"
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
	Stage            string                     `json:"stage"`
	Verb             string                     `json:"verb"`
	RequestURI       string                     `json:"requestURI"`
	UserAgent        string                     `json:"userAgent"`
	User             struct{ Username string }  `json:"user"`
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
	return requestsOf(t, path, operatorUser)
}

// probeUserAgent marks the requests a test makes as the operator's
// ServiceAccount to see what it may not do; requestsOf skips them.
const probeUserAgent = "tether-test-probe"

// requestsOf reads the audit log: the permissions the requests made as
// user (impersonated) used, and the requests it was refused.
func requestsOf(t *testing.T, path, user string) (used map[permission]int, denied []string) {
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
		if ev.ImpersonatedUser == nil || ev.ImpersonatedUser.Username != user || ev.ObjectRef == nil || ev.UserAgent == probeUserAgent {
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

// granted lists every (group, resource, verb) a role's rules grant; a rule
// limited to some resourceNames counts as its (group, resource, verb).
func granted(t *testing.T, rules []rbacv1.PolicyRule) []permission {
	t.Helper()
	var perms []permission
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
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

// rbacOperator runs the operator as config/default's Deployment runs it,
// as the operator's ServiceAccount, and stops it with SIGTERM when stop is
// called or the test ends.
type rbacOperator struct {
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
	// metricsAddr is where it serves its metrics, and consoleAddr its
	// web console.
	metricsAddr, consoleAddr string
}

// deploymentArgs are the arguments of the manager container of the
// Deployment config/default renders, with its listen addresses moved to
// free local ports, as the Pod's own network namespace would leave them.
func deploymentArgs(t *testing.T) (args []string, metricsAddr, consoleAddr string) {
	t.Helper()
	for _, u := range renderDefault(t) {
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		if err != nil || len(containers) == 0 {
			t.Fatalf("the Deployment has no containers: %v", err)
		}
		c, _ := containers[0].(map[string]any)
		raw, _ := c["args"].([]any)
		for _, a := range raw {
			arg, _ := a.(string)
			flag, _, _ := strings.Cut(arg, "=")
			switch flag {
			case "--health-probe-bind-address":
				arg = flag + "=" + freeAddr(t)
			case "--metrics-bind-address":
				metricsAddr = freeAddr(t)
				arg = flag + "=" + metricsAddr
			case "--console-bind-address":
				consoleAddr = freeAddr(t)
				arg = flag + "=" + consoleAddr
			}
			args = append(args, arg)
		}
		if len(args) == 0 || args[0] != "run" || !slices.Contains(args, "--cluster") {
			t.Fatalf("the Deployment's arguments %q do not run the operator", args)
		}
		return args, metricsAddr, consoleAddr
	}
	t.Fatal("config/default renders no Deployment")
	return nil, "", ""
}

// startRBACOperator starts the operator with the Deployment's arguments,
// plus what a Pod gets from its ServiceAccount's mount: the API server
// (kubeconfig, impersonating the ServiceAccount) and the namespace. Its
// home and cache cannot be written, as under the Deployment's read-only
// root filesystem; tetherHome, if set, is a configuration directory as a
// ConfigMap volume would provide it, and TMPDIR is an empty directory.
// Both are checked, when the test ends, to hold only what they held.
func startRBACOperator(t *testing.T, kubeconfig, tetherHome string) *rbacOperator {
	t.Helper()
	args, metricsAddr, consoleAddr := deploymentArgs(t)
	cmd := exec.Command(tetherBin, append(args, "--kubeconfig", kubeconfig, "-n", operatorNamespace)...)
	unwritable := "/proc/tether-unwritable"
	if tetherHome == "" {
		tetherHome = unwritable
	}
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+unwritable, "XDG_CACHE_HOME="+unwritable, config.HomeEnv+"="+tetherHome, "TMPDIR="+tmp)
	before := dirListing(t, tetherHome)
	op := &rbacOperator{cmd: cmd, output: &syncBuffer{}, done: make(chan struct{}), metricsAddr: metricsAddr, consoleAddr: consoleAddr}
	cmd.Stdout, cmd.Stderr = op.output, op.output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(op.done) }()
	t.Cleanup(func() {
		if out := op.output.String(); strings.Contains(out, unwritable) {
			t.Errorf("the operator tried its unwritable home:\n%s", out)
		}
		if got := dirListing(t, tmp); len(got) > 0 {
			t.Errorf("the operator wrote to TMPDIR: %v", got)
		}
		if got := dirListing(t, tetherHome); !slices.Equal(got, before) {
			t.Errorf("the operator changed its TETHER_HOME: %v, was %v", got, before)
		}
	})
	t.Cleanup(op.stop)
	return op
}

// grepLines returns the lines of text that contain substr.
func grepLines(text, substr string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// dirListing lists every file under dir with its size and modification
// time; nothing when dir does not exist.
func dirListing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if path == dir {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %s", path, info.Size(), info.ModTime()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
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

// waitUntil polls cond every 50ms until it holds, for a generous minute.
func waitUntil(t *testing.T, what string, cond func() bool, dump func() string) {
	t.Helper()
	const within = 60 * time.Second
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never %s within %v:\n%s", what, within, dump())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gitWorkspace makes dir a git repository with one commit, so that the
// operator takes interval checkpoints of it.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.email", "agent@example.invalid"}, {"config", "user.name", "agent"},
		{"commit", "-q", "--allow-empty", "-m", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// blocksOwner checks that refs name the owner with blockOwnerDeletion, and
// records perm, the permission OwnerReferencesPermissionEnforcement
// required for it, as used.
func blocksOwner(t *testing.T, refs []metav1.OwnerReference, kind, name string, perm permission, used map[permission]bool) {
	t.Helper()
	for _, ref := range refs {
		if ref.Kind == kind && ref.Name == name && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			used[perm] = true
			return
		}
	}
	t.Errorf("owner references %+v: none blocks the deletion of %s %s", refs, kind, name)
}

// serviceAccountToken creates a ServiceAccount in default and a token for it.
func serviceAccountToken(t *testing.T, cs *kubernetes.Clientset, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// TestOperatorLeastPrivilege runs the operator with only the permissions
// config/rbac grants its ServiceAccount, through the Hook lifecycle with
// interval checkpoints and their pruning, retention, a Worker run as Pods
// whose crash is notified, Events, and an authorized scrape of its metrics.
// The API server's audit log then shows that nothing the operator asked
// was refused, and that every permission the operator's roles grant was
// used.
func TestOperatorLeastPrivilege(t *testing.T) {
	// OwnerReferencesPermissionEnforcement refuses an owner reference that
	// blocks its owner's deletion unless its author may update the owner's
	// finalizers, as some clusters (OpenShift) do.
	env := testenv.StartWith(t, testenv.Options{AuditPolicy: auditEverything, AdmissionPlugins: []string{"OwnerReferencesPermissionEnforcement"}})
	ctx := context.Background()
	c := env.Client
	installRBAC(t, c)
	// The finalizers permissions the admission plugin checked, proven by
	// the owner references it let through.
	finalizers := map[permission]bool{}
	kubeconfig := env.ImpersonatingKubeconfig(t, operatorUser)

	// The identity is the ServiceAccount's, not an administrator's.
	out, err := exec.Command(testenv.Kubectl(t), "--kubeconfig", kubeconfig, "auth", "can-i", "list", "secrets", "-A").CombinedOutput()
	if err == nil || strings.TrimSpace(string(out)) != "no" {
		t.Fatalf("the operator's identity may list Secrets: %v\n%s", err, out)
	}
	// Nor read one by name, but the receipt key: not another namespace's
	// password, not a Secret of its own namespace, not a key by another name.
	asOperator := rest.CopyConfig(env.Config)
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: operatorUser}
	asOperator.UserAgent = probeUserAgent
	operatorClient, err := client.New(asOperator, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payroll"}}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []client.ObjectKey{{Namespace: "payroll", Name: "password"}, {Namespace: operatorNamespace, Name: "webhook-token"}, {Namespace: "default", Name: "other-key"}} {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, StringData: map[string]string{"password": "hunter2"}}); err != nil {
			t.Fatal(err)
		}
		if err := operatorClient.Get(ctx, key, &corev1.Secret{}); !apierrors.IsForbidden(err) {
			t.Errorf("the operator's ServiceAccount read Secret %s: %v, want Forbidden", key, err)
		}
	}

	// A notifier of Worker crashes: the operator reads and patches Events.
	// Three more fail on the same crash: each NotifyFailed Event about the
	// same version of the Worker names its notifier (client-go's recorder
	// would fold them into one series showing the first).
	base := t.TempDir()
	notified := filepath.Join(base, "notified")
	if err := os.Mkdir(notified, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(base, "notifier.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nf=$(mktemp \"$1/run.XXXXXX\") && cat > \"$f\" && mv \"$f\" \"$f.json\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The configuration comes as a ConfigMap volume would bring it: a
	// config.yaml in $TETHER_HOME, which the operator only reads.
	home := filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, config.FileName)
	conf := fmt.Sprintf("notify:\n- name: crash-log\n  command: [%s, %s]\n  reasons: [WorkerCrashed]\n  timeout: 5s\n  minInterval: 0s\n", script, notified) +
		"- name: broken-1\n  command: [\"false\"]\n  reasons: [WorkerCrashed]\n" +
		"- name: broken-2\n  command: [\"false\"]\n  reasons: [WorkerCrashed]\n" +
		"- name: broken-3\n  command: [\"false\"]\n  reasons: [WorkerCrashed]\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}

	op := startRBACOperator(t, kubeconfig, home)
	metricsAddr := op.metricsAddr
	if metricsAddr == "" {
		t.Fatal("the Deployment serves no metrics")
	}
	// A step that never comes shows the operator's log and what the API
	// server refused it so far.
	dump := func() string {
		_, denied := operatorRequests(t, env.AuditLog)
		slices.Sort(denied)
		return op.output.String() + "refused:\n" + strings.Join(slices.Compact(denied), "\n")
	}

	// The Hook lifecycle, driven by the agent's verbs (with the user's
	// credentials, as an agent would), reconciled by the operator: interval
	// checkpoints while a step runs, the older pruned, and the completed
	// Hook deleted by retention.
	ws := gitWorkspace(t)
	hook := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"},
		Spec: v1.HookSpec{
			Goal: "least privilege", Workspace: ws,
			Steps:              []v1.Step{step("one", 0, "true"), step("two", 0, "true")},
			CheckpointInterval: &metav1.Duration{Duration: time.Second},
			MaxCheckpoints:     1,
			Retention:          &v1.RetentionPolicy{Completed: &metav1.Duration{Duration: 2 * time.Second}},
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
	getHook := func(name string) *v1.Hook {
		h := &v1.Hook{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, h); err != nil {
			return nil
		}
		return h
	}
	waitUntil(t, "reconciled the Hook", func() bool {
		h := getHook("task")
		return h != nil && h.Status.State != "" && h.Status.ObservedGeneration == h.Generation
	}, dump)
	agent("step", "begin", "task")
	checkpoints := func() []string {
		list := &v1.CheckpointList{}
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, cp := range list.Items {
			names = append(names, cp.Name)
		}
		return names
	}
	for i := range 2 {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("work-%d.txt", i)), []byte("work\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("task-%d", i+1)
		waitUntil(t, "took interval checkpoint "+want, func() bool { return slices.Contains(checkpoints(), want) }, dump)
	}
	// The checkpoint blocks its Hook's deletion: updating the Hook's
	// finalizers is what lets the operator create it.
	cp := &v1.Checkpoint{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "task-2"}, cp); err != nil {
		t.Fatal(err)
	}
	blocksOwner(t, cp.OwnerReferences, "Hook", "task", permission{v1.GroupVersion.Group, "hooks/finalizers", "update"}, finalizers)
	waitUntil(t, "pruned the first checkpoint", func() bool { return !slices.Contains(checkpoints(), "task-1") }, dump)
	for _, args := range [][]string{{"step", "done", "task"}, {"step", "begin", "task"}, {"step", "done", "task"}} {
		agent(args...)
	}
	waitUntil(t, "deleted the completed Hook", func() bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "task"}, &v1.Hook{})
		return apierrors.IsNotFound(err)
	}, dump)

	// Receipts, verified by the operator with the key in the namespace's
	// Secret, with nothing written to disk: a good one verifies, a forged
	// signature is flagged on the Hook, by an Event and by tether recover.
	forged := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "forged"},
		Spec:       v1.HookSpec{Goal: "receipts", Workspace: ws, Steps: []v1.Step{step("one", 0, "true"), step("two", 0, "true")}},
	}
	if err := c.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "reconciled the forged Hook", func() bool { h := getHook("forged"); return h != nil && h.Status.State != "" }, dump)
	agent("step", "begin", "forged")
	agent("step", "done", "forged")
	receiptsCondition := func(status metav1.ConditionStatus, reason string) func() bool {
		return func() bool {
			h := getHook("forged")
			if h == nil {
				return false
			}
			cond := meta.FindStatusCondition(h.Status.Conditions, controllers.ConditionReceiptsVerified)
			return cond != nil && cond.Status == status && cond.Reason == reason
		}
	}
	waitUntil(t, "verified the receipts", receiptsCondition(metav1.ConditionTrue, controllers.ReasonReceiptsVerified), dump)
	recoverText := func() string {
		t.Helper()
		out, err := exec.Command(tetherBin, "recover", "forged", "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default").CombinedOutput()
		if err != nil {
			t.Fatalf("tether recover: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := recoverText(); !strings.Contains(out, "verified") || strings.Contains(out, "INVALID") {
		t.Errorf("tether recover --cluster on a verified receipt:\n%s", out)
	}
	h := getHook("forged")
	env0 := h.Status.Steps[0].Receipts[0].Envelope
	sig := []byte(env0.Signatures[0].Sig)
	if sig[len(sig)/2] == 'A' {
		sig[len(sig)/2] = 'B'
	} else {
		sig[len(sig)/2] = 'A'
	}
	env0.Signatures[0].Sig = string(sig)
	if err := c.Status().Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "flagged the forged receipt", receiptsCondition(metav1.ConditionFalse, controllers.ReasonReceiptsInvalid), dump)
	waitUntil(t, "recorded the failed verification", func() bool {
		events := &eventsv1.EventList{}
		if err := c.List(ctx, events, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events.Items {
			if ev.Regarding.Name == "forged" && ev.Reason == controllers.EventReceiptVerificationFailed && ev.Type == corev1.EventTypeWarning {
				return true
			}
		}
		return false
	}, dump)
	if out := recoverText(); !strings.Contains(out, "INVALID") || !strings.Contains(out, "Do not trust") {
		t.Errorf("tether recover --cluster on a forged receipt does not flag it:\n%s", out)
	}

	// A Worker run as Pods: the operator creates the Pod from the
	// template, this test plays the kubelet, the crash frees the Hook the
	// Worker held (an Event, notified), and deleting the Worker deletes its
	// Pods.
	held := &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "held"},
		Spec:       v1.HookSpec{Goal: "held by the agent", Assignee: "agent", Steps: []v1.Step{{Name: "one"}}},
	}
	if err := c.Create(ctx, held); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "reconciled the held Hook", func() bool { h := getHook("held"); return h != nil && h.Status.State != "" }, dump)
	worker := &v1.Worker{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent"},
		Spec: v1.WorkerSpec{
			Restart: v1.RestartPolicy{Auto: true, MaxCrashes: 5, Window: &metav1.Duration{Duration: 10 * time.Minute}},
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "agent", Image: "example.invalid/agent:1"}},
			}},
		},
	}
	if err := c.Create(ctx, worker); err != nil {
		t.Fatal(err)
	}
	getWorker := func() *v1.Worker {
		w := &v1.Worker{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "agent"}, w); err != nil {
			return nil
		}
		return w
	}
	kubelet := func(name string, phase corev1.PodPhase, state corev1.ContainerState) {
		t.Helper()
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, pod); err != nil {
			t.Fatalf("pod %s: %v", name, err)
		}
		pod.Status.Phase = phase
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: pod.Spec.Containers[0].Image, State: state}}
		if err := c.Status().Update(ctx, pod); err != nil {
			t.Fatalf("playing the kubelet on pod %s: %v", name, err)
		}
	}
	waitUntil(t, "created the Worker's Pod", func() bool { w := getWorker(); return w != nil && w.Status.PodName == "agent-0" }, dump)
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "agent-0"}, pod); err != nil {
		t.Fatal(err)
	}
	blocksOwner(t, pod.OwnerReferences, "Worker", "agent", permission{v1.GroupVersion.Group, "workers/finalizers", "update"}, finalizers)
	kubelet("agent-0", corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}})
	waitUntil(t, "saw the Worker running", func() bool { w := getWorker(); return w != nil && w.Status.Phase == v1.WorkerRunning }, dump)
	kubelet("agent-0", corev1.PodFailed, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 3, Reason: "Error", StartedAt: metav1.Now(), FinishedAt: metav1.Now(),
	}})
	waitUntil(t, "restarted the crashed Worker", func() bool { w := getWorker(); return w != nil && w.Status.PodName == "agent-1" }, dump)
	waitUntil(t, "freed the crashed Worker's Hook", func() bool { h := getHook("held"); return h != nil && h.Spec.Assignee == "" }, dump)
	waitUntil(t, "notified the crash", func() bool {
		docs, _ := filepath.Glob(filepath.Join(notified, "*.json"))
		return len(docs) > 0
	}, dump)
	waitUntil(t, "recorded an Event naming each failed notifier", func() bool {
		events := &eventsv1.EventList{}
		if err := c.List(ctx, events, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		for _, ev := range events.Items {
			for _, n := range []string{"broken-1", "broken-2", "broken-3"} {
				if ev.Reason == "NotifyFailed" && strings.Contains(ev.Note, "notifier "+n+" ") {
					named[n] = true
				}
			}
		}
		return len(named) == 3
	}, dump)
	if err := c.Delete(ctx, worker); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "deleted the Worker and its Pods", func() bool {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		return getWorker() == nil && len(pods.Items) == 0
	}, dump)

	// A Pod in the way of a Worker's first Pod is read, uncached, and
	// found not to be the Worker's: the Worker does not start.
	squatter := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "blocked-0"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "other", Image: "example.invalid/other:1"}}},
	}
	if err := c.Create(ctx, squatter); err != nil {
		t.Fatal(err)
	}
	blocked := worker.DeepCopy()
	blocked.ObjectMeta = metav1.ObjectMeta{Namespace: "default", Name: "blocked"}
	if err := c.Create(ctx, blocked); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "refused the Pod that is not the Worker's", func() bool {
		events := &eventsv1.EventList{}
		if err := c.List(ctx, events, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events.Items {
			if ev.Regarding.Name == "blocked" && strings.Contains(ev.Note, "is not this Worker's") {
				return true
			}
		}
		return false
	}, dump)

	// An authorized scrape of the metrics: the operator reviews the
	// scraper's token and access.
	cs := kubernetes.NewForConfigOrDie(env.Config)
	scraper := serviceAccountToken(t, cs, "scraper")
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tether-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: "default"}},
	}); err != nil {
		t.Fatal(err)
	}
	httpc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 10 * time.Second}
	var scraped string
	waitUntil(t, "served the metrics to the scraper", func() bool {
		req, err := http.NewRequest(http.MethodGet, "https://"+metricsAddr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+scraper)
		resp, err := httpc.Do(req)
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			return false
		}
		scraped = string(body)
		return true
	}, dump)
	if failures := grepLines(scraped, "tether_receipt_verification_failures_total "); failures == "" || strings.HasSuffix(failures, " 0") {
		t.Errorf("the metrics do not count the forged receipt:\n%s", grepLines(scraped, "receipt"))
	}

	browseConsole(t, c, op.consoleAddr, dump)

	op.stop()
	used, denied := operatorRequests(t, env.AuditLog)
	if len(denied) > 0 {
		slices.Sort(denied)
		t.Errorf("the API server refused the operator %d times:\n%s", len(denied), strings.Join(slices.Compact(denied), "\n"))
	}
	var lines []string
	for p, n := range used {
		lines = append(lines, fmt.Sprintf("%s: %d", p, n))
	}
	sort.Strings(lines)
	t.Logf("the operator's requests, by permission:\n%s", strings.Join(lines, "\n"))
	for _, file := range []string{"role.yaml", "leader_election_role.yaml", "metrics_auth_role.yaml"} {
		for _, p := range granted(t, roleRules(t, file)) {
			switch {
			case used[p] > 0, finalizers[p]:
			case p == permission{"events.k8s.io", "events", "patch"}:
				// Only a repeat of an identical Event (the same object
				// version, reason and message) is patched into a series;
				// this scenario makes none. TestSeriesOnKubeAPIServer
				// proves the patch on kube-apiserver.
			case p.verb == "list" && used[permission{p.group, p.resource, "watch"}] > 0:
				// An informer lists, then watches; client-go streams the
				// list through the watch (sendInitialEvents) where the
				// API server can, and sends a LIST where it cannot.
			default:
				t.Errorf("config/rbac/%s grants %s, which the operator never used", file, p)
			}
		}
	}
	if out := dump(); strings.Contains(out, "is forbidden: User") {
		t.Errorf("the operator was refused something:\n%s", out)
	}
}

// TestKubectlAcceptance installs the operator with `kubectl apply -k
// config/default` (the API server accepts the CRDs, RBAC, Service and
// Deployment; with no kubelet the Deployment does not run), runs the
// operator as the ServiceAccount kubectl created, and reads the Hooks,
// Workers and Events made through `tether --cluster` with kubectl get,
// describe and events, beside `tether --cluster get`.
func TestKubectlAcceptance(t *testing.T) {
	kubectl := testenv.Kubectl(t)
	env := testenv.Start(t)
	ctx := context.Background()
	k := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", env.Kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := k("apply", "-k", filepath.Join(repoRoot(t), "config", "default"))
	for _, want := range []string{
		"namespace/tether-system", "serviceaccount/tether-controller-manager",
		"role.rbac.authorization.k8s.io/tether-leader-election-role",
		"clusterrole.rbac.authorization.k8s.io/tether-manager-role",
		"clusterrolebinding.rbac.authorization.k8s.io/tether-manager-rolebinding",
		"service/tether-controller-manager-metrics-service",
		"deployment.apps/tether-controller-manager",
		"customresourcedefinition.apiextensions.k8s.io/hooks.agents.tether.dev",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply -k config/default did not apply %s:\n%s", want, out)
		}
	}
	// Every object config/default renders is on the API server.
	for _, u := range renderDefault(t) {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), live); err != nil {
			t.Errorf("%s %s after kubectl apply: %v", u.GetKind(), u.GetName(), err)
		}
	}
	if got := k("get", "deployment", "tether-controller-manager", "-n", operatorNamespace, "-o", "jsonpath={.spec.template.spec.serviceAccountName}"); got != operatorSA {
		t.Errorf("the Deployment runs as %q, want %s", got, operatorSA)
	}
	if got := strings.TrimSpace(k("auth", "can-i", "create", "pods", "--as", operatorUser, "-n", "default")); got != "yes" {
		t.Errorf("kubectl auth can-i create pods as the operator: %q", got)
	}

	op := startRBACOperator(t, env.ImpersonatingKubeconfig(t, operatorUser), "")
	dump := func() string { return op.output.String() }

	dir := t.TempDir()
	manifest := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: agents.tether.dev/v1alpha1
kind: Hook
metadata:
  name: accepted
  namespace: default
spec:
  goal: read with kubectl
  assignee: agent
  steps:
  - name: one
---
apiVersion: agents.tether.dev/v1alpha1
kind: Worker
metadata:
  name: agent
  namespace: default
spec:
  template:
    spec:
      containers:
      - name: agent
        image: example.invalid/agent:1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tether := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(tetherBin, append(args, "--cluster", "--kubeconfig", env.Kubeconfig, "-n", "default")...)
		cmd.Env = append(os.Environ(), "TETHER_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tether %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tether("apply", "-f", manifest)
	waitUntil(t, "started the Worker's Pod", func() bool {
		out, _ := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "get", "pod", "agent-0", "-n", "default", "-o", "name").CombinedOutput()
		return strings.TrimSpace(string(out)) == "pod/agent-0"
	}, dump)
	// Playing the kubelet: the Pod runs.
	pod := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "agent-0"}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "agent", Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	if err := env.Client.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "reconciled the Hook", func() bool {
		out, _ := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "get", "hook", "accepted", "-n", "default", "-o", "jsonpath={.status.state}").CombinedOutput()
		return strings.TrimSpace(string(out)) != ""
	}, dump)

	for _, kind := range []string{"hooks", "workers"} {
		kget := k("get", kind, "-n", "default")
		tget := tether("get", kind)
		for _, name := range map[string][]string{"hooks": {"accepted"}, "workers": {"agent"}}[kind] {
			if !strings.Contains(kget, name) || !strings.Contains(tget, name) {
				t.Errorf("get %s: kubectl and tether should both list %s:\n--- kubectl\n%s--- tether\n%s", kind, name, kget, tget)
			}
		}
	}
	if d := k("describe", "hook", "accepted", "-n", "default"); !strings.Contains(d, "Name:         accepted") || !strings.Contains(d, "read with kubectl") {
		t.Errorf("kubectl describe hook:\n%s", d)
	}
	waitUntil(t, "recorded the Worker's start", func() bool {
		out, _ := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "events", "-n", "default", "--for", "worker/agent").CombinedOutput()
		return strings.Contains(string(out), "WorkerStarted")
	}, dump)
	if d := k("describe", "worker", "agent", "-n", "default"); !strings.Contains(d, "Name:         agent") || !strings.Contains(d, "WorkerStarted") {
		t.Errorf("kubectl describe worker shows no WorkerStarted Event:\n%s", d)
	}
	if ev := k("get", "events", "-n", "default", "--field-selector", "involvedObject.kind=Worker"); !strings.Contains(ev, "WorkerStarted") {
		t.Errorf("kubectl get events:\n%s", ev)
	}
	if ev := tether("events", "--for", "worker/agent"); !strings.Contains(ev, "WorkerStarted") {
		t.Errorf("tether events --for worker/agent:\n%s", ev)
	}
	if out := dump(); strings.Contains(out, "is forbidden: User") {
		t.Errorf("the operator was refused something:\n%s", out)
	}
}

// TestAgentServiceAccount runs the agent verbs as the ServiceAccount of
// config/samples/agent_rbac.yaml, as an agent Pod of a template Worker
// would, beside an operator: each succeeds, the first step done creates
// the receipt key Secret and signs with it, and the API server refused the
// ServiceAccount nothing.
func TestAgentServiceAccount(t *testing.T) {
	env := testenv.StartWith(t, testenv.Options{AuditPolicy: auditEverything})
	ctx := context.Background()
	c := env.Client
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "samples", "agent_rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		u.SetNamespace("default")
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	const agentUser = "system:serviceaccount:default:tether-agent"
	kubeconfig := env.ImpersonatingKubeconfig(t, agentUser)
	startOperator(t, env, nil)

	// The Worker whose Pod the agent would run in (no kubelet runs it).
	if err := c.Create(ctx, &v1.Worker{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "agent"},
		Spec: v1.WorkerSpec{Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			ServiceAccountName: "tether-agent",
			Containers:         []corev1.Container{{Name: "agent", Image: "agent:1"}},
		}}},
	}); err != nil {
		t.Fatal(err)
	}
	ws := gitWorkspace(t)
	if err := c.Create(ctx, &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "task"},
		Spec:       v1.HookSpec{Goal: "an agent Pod's verbs", Workspace: ws, Steps: []v1.Step{step("one", 0, "true"), step("two", 0, "true")}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &v1.Hook{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "spare"},
		Spec:       v1.HookSpec{Goal: "claimed next", Steps: []v1.Step{{Name: "one"}}},
	}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for _, args := range [][]string{
		{"claim", "task", "--worker", "agent"},
		{"claim", "--next", "--worker", "agent"},
		{"step", "begin", "task"},
		{"heartbeat", "task"},
		{"step", "done", "task"},
		{"step", "begin", "task"},
		{"heartbeat", "task"},
		{"step", "done", "task"},
	} {
		cmd := exec.Command(tetherBin, append(args, "--cluster", "--kubeconfig", kubeconfig, "-n", "default")...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), config.HomeEnv+"="+home, "TETHER_WORKER=agent", config.ActorEnv+"=worker/agent")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tether %s as the agent's ServiceAccount: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	hook := &v1.Hook{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "task"}, hook); err != nil {
		t.Fatal(err)
	}
	if hook.Status.State != v1.HookCompleted || hook.Spec.Assignee != "agent" {
		t.Errorf("hook %s, assignee %q; want completed, claimed by agent", hook.Status.State, hook.Spec.Assignee)
	}
	for _, st := range hook.Status.Steps {
		if len(st.Receipts) != 1 || st.Receipts[0].Envelope == nil {
			t.Errorf("step %s: receipts %+v, want one signed", st.Name, st.Receipts)
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "tether-receipt-key"}, &corev1.Secret{}); err != nil {
		t.Errorf("the receipt key Secret: %v", err)
	}

	used, denied := requestsOf(t, env.AuditLog, agentUser)
	if len(denied) > 0 {
		slices.Sort(denied)
		t.Errorf("the API server refused the agent's ServiceAccount %d times:\n%s", len(denied), strings.Join(slices.Compact(denied), "\n"))
	}
	var lines []string
	for p, n := range used {
		lines = append(lines, fmt.Sprintf("%s: %d", p, n))
	}
	sort.Strings(lines)
	t.Logf("the agent's requests, by permission:\n%s", strings.Join(lines, "\n"))
	// Every rule of the sample Role is used: it grants nothing more.
	var role rbacv1.Role
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		if strings.Contains(doc, "\nkind: Role\n") {
			if err := sigsyaml.UnmarshalStrict([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(role.Rules) == 0 {
		t.Fatal("agent_rbac.yaml has no Role rules")
	}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if p := (permission{g, res, v}); used[p] == 0 {
						t.Errorf("agent_rbac.yaml grants %s, which the agent verbs never used", p)
					}
				}
			}
		}
	}
}

// browseConsole opens every page of the operator's web console, at addr,
// and its event stream: with the operator's own permissions, none refused.
func browseConsole(t *testing.T, c client.Client, addr string, dump func() string) {
	t.Helper()
	if addr == "" {
		t.Fatal("the Deployment serves no console")
	}
	base := "http://" + addr
	pages := []string{"/", "/?state=recovering&q=a"}
	hooks := &v1.HookList{}
	workers := &v1.WorkerList{}
	if err := c.List(context.Background(), hooks); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), workers); err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks.Items {
		pages = append(pages, "/hooks/"+h.Namespace+"/"+h.Name)
	}
	for _, w := range workers.Items {
		pages = append(pages, "/workers/"+w.Namespace+"/"+w.Name)
	}
	if len(pages) < 4 {
		t.Fatalf("too few objects to browse: %v", pages)
	}
	httpc := &http.Client{Timeout: 10 * time.Second}
	for _, p := range pages {
		var status int
		var body string
		waitUntil(t, "served console page "+p, func() bool {
			resp, err := httpc.Get(base + p)
			if err != nil {
				return false
			}
			defer func() { _ = resp.Body.Close() }()
			data, _ := io.ReadAll(resp.Body)
			status, body = resp.StatusCode, string(data)
			return status == http.StatusOK
		}, func() string { return fmt.Sprintf("GET %s: %d\n%s\n%s", p, status, body, dump()) })
		if strings.Contains(body, "is forbidden: User") {
			t.Errorf("console page %s shows a refusal:\n%s", p, body)
		}
	}
	req, err := http.NewRequest(http.MethodGet, base+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	stream := bufio.NewReader(resp.Body)
	line, err := stream.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "event: ready") {
		line, err = stream.ReadString('\n')
	}
	if err != nil {
		t.Errorf("the console's event stream: %v", err)
	}
	// The watches are up once the stream is ready; give a refusal, if
	// any, time to reach the audit log before the operator stops.
	time.Sleep(time.Second)
}
