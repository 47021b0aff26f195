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
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/tether-dev/tether/internal/config"
)

// StoreEnv is the environment variable that names the store directory.
const StoreEnv = config.StoreEnv

// StoreDirName is the name of the store directory searched for upward from
// the working directory.
const StoreDirName = ".tether"

// GlobalOptions are the flags every tether command takes.
type GlobalOptions struct {
	// Store is the --store flag: the local store directory.
	Store string
	// Cluster is the --cluster flag: talk to a Kubernetes cluster instead of the local store.
	Cluster bool
	// ConfigFile is the --config flag: the tether configuration file
	// (default $TETHER_HOME/config.yaml).
	ConfigFile string
	// KubeConfig holds --kubeconfig, --context and -n/--namespace, resolved
	// with the kubeconfig loading rules as kubectl does.
	KubeConfig *genericclioptions.ConfigFlags
}

// NewGlobalOptions returns GlobalOptions with kubectl's defaults.
func NewGlobalOptions() *GlobalOptions {
	kubeconfig, context, namespace := "", "", ""
	return &GlobalOptions{
		KubeConfig: &genericclioptions.ConfigFlags{
			KubeConfig: &kubeconfig,
			Context:    &context,
			Namespace:  &namespace,
		},
	}
}

// AddFlags registers the global flags on fs.
func (o *GlobalOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Store, "store", "", "local store directory (default $"+StoreEnv+", else the nearest "+StoreDirName+"/ upward, else ./"+StoreDirName+")")
	cluster, _ := strconv.ParseBool(os.Getenv(config.ClusterEnv))
	fs.BoolVar(&o.Cluster, "cluster", cluster, "use a Kubernetes cluster through the kubeconfig loading rules (in a Pod: its ServiceAccount) instead of the local store (default $"+config.ClusterEnv+")")
	fs.StringVar(&o.ConfigFile, "config", "", "tether configuration file (default $TETHER_HOME/config.yaml, TETHER_HOME defaulting to ~/.config/tether)")
	o.KubeConfig.AddFlags(fs)
}

// Namespace returns the namespace to act in: -n, else in cluster mode the
// kubeconfig context's namespace, else "default".
// A namespace that is not a DNS-1123 label is refused, naming where it came
// from, before any path or request is formed from it.
func (o *GlobalOptions) Namespace() (string, error) {
	if ns, err := o.namespaceFlag(); ns != "" || err != nil {
		return ns, err
	}
	return o.site().defaultNamespace(o)
}

// namespaceFlag is the namespace -n gives, "" without it, or an error
// naming the flag for a value that is not a valid namespace name.
func (o *GlobalOptions) namespaceFlag() (string, error) {
	ns := *o.KubeConfig.Namespace
	if ns == "" {
		return "", nil
	}
	if msgs := apivalidation.ValidateNamespaceName(ns, false); len(msgs) > 0 {
		return "", fmt.Errorf("-n/--namespace: %q is not a valid namespace name: %s", ns, strings.Join(msgs, "; "))
	}
	return ns, nil
}

// StoreDir resolves the local store directory from the flag, the
// environment and the working directory.
func (o *GlobalOptions) StoreDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return ResolveStoreDir(o.Store, os.Getenv(StoreEnv), wd)
}

// ResolveStoreDir picks the store directory: flag if set, else env if set,
// else the nearest StoreDirName directory at or above wd, else wd/StoreDirName.
// The result is absolute.
func ResolveStoreDir(flag, env, wd string) (string, error) {
	switch {
	case flag != "":
		return filepath.Abs(flag)
	case env != "":
		return filepath.Abs(env)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		candidate := filepath.Join(dir, StoreDirName)
		fi, err := os.Stat(candidate)
		if err == nil && fi.IsDir() {
			return candidate, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return filepath.Join(wd, StoreDirName), nil
}
