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
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	containerv1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/tether-dev/tether/internal/ociimage"
)

// TestImage builds the image `make image` builds from the shipped binary,
// opens both outputs as a container runtime would, and runs the binary
// found in the layer.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	created := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	opts := ociimage.Options{
		Binary: tetherBin, Tag: "tether:v9.9.9-test", Version: "v9.9.9-test", Commit: "abc123", Created: created,
		LayoutDir: filepath.Join(dir, "oci"), Tarball: filepath.Join(dir, "tether.tar"),
	}
	built, err := ociimage.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := built.Digest()
	if err != nil {
		t.Fatal(err)
	}

	fromLayout := imageFromLayout(t, opts.LayoutDir, opts.Tag)
	tag, err := name.NewTag(opts.Tag)
	if err != nil {
		t.Fatal(err)
	}
	fromTarball, err := tarball.ImageFromPath(opts.Tarball, &tag)
	if err != nil {
		t.Fatalf("the tarball is not loadable: %v", err)
	}
	for source, img := range map[string]containerv1.Image{"OCI layout": fromLayout, "tarball": fromTarball} {
		t.Run(source, func(t *testing.T) {
			checkImage(t, img, opts)
			if source == "OCI layout" {
				if got, err := img.Digest(); err != nil || got != want {
					t.Errorf("layout image digest %v (%v), want %v", got, err, want)
				}
			}
		})
	}

	again, err := ociimage.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := again.Digest(); d != want {
		t.Errorf("rebuilding from the same binary and time gave digest %v, want %v: the image is not reproducible", d, want)
	}

	if _, err := ociimage.Build(ociimage.Options{Binary: "/bin/sh", Tag: "x:y", Tarball: filepath.Join(dir, "sh.tar")}); err == nil ||
		!strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("building from a dynamically linked binary: %v, want a refusal naming CGO_ENABLED=0", err)
	}
}

func imageFromLayout(t *testing.T, dir, tag string) containerv1.Image {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("the OCI layout does not open: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("the layout's index holds %d manifests, want 1", len(m.Manifests))
	}
	desc := m.Manifests[0]
	if got := desc.Annotations[ociimage.RefName]; !strings.HasSuffix(got, tag) {
		t.Errorf("the index names the image %q, want %q", got, tag)
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func checkImage(t *testing.T, img containerv1.Image, opts ociimage.Options) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, []string{ociimage.BinaryPath}) {
		t.Errorf("entrypoint %q, want [%s]", c.Entrypoint, ociimage.BinaryPath)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root)", c.User)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
	for k, v := range map[string]string{
		ociimage.LabelVersion: opts.Version, ociimage.LabelRevision: opts.Commit,
		ociimage.LabelCreated: opts.Created.Format(time.RFC3339), ociimage.LabelTitle: "tether",
	} {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}

	files := extract(t, img)
	bin, ok := files[strings.TrimPrefix(ociimage.BinaryPath, "/")]
	if !ok {
		t.Fatalf("the layer has no %s; it has %v", ociimage.BinaryPath, keys(files))
	}
	if bin.Mode&0o111 == 0 || bin.Uid != 0 {
		t.Errorf("%s: mode %o uid %d, want executable and root-owned", ociimage.BinaryPath, bin.Mode, bin.Uid)
	}
	if home := files[strings.TrimPrefix(ociimage.Home, "/")]; home == nil || home.Uid != ociimage.UID {
		t.Errorf("%s is missing or not owned by %d", ociimage.Home, ociimage.UID)
	}
	if passwd := files["etc/passwd"]; passwd == nil || !strings.Contains(string(passwd.data), ":65532:65532:") {
		t.Errorf("/etc/passwd does not name the non-root user")
	}
	if _, err := ociimage.StaticArch(bytes.NewReader(bin.data)); err != nil {
		t.Errorf("the binary in the layer is not static: %v", err)
	}
	shipped, err := os.ReadFile(opts.Binary)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bin.data, shipped) {
		t.Errorf("the binary in the layer (%d bytes) differs from the one built (%d bytes)", len(bin.data), len(shipped))
	}

	exe := filepath.Join(t.TempDir(), "tether")
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), opts.Version) {
		t.Errorf("the extracted binary's version: %v: %s", err, out)
	}
}

type entry struct {
	*tar.Header
	data []byte
}

func extract(t *testing.T, img containerv1.Image) map[string]*entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := map[string]*entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = &entry{Header: h, data: data}
	}
}

func keys(m map[string]*entry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestManagerRunsTheImageBinary checks that the operator Deployment runs
// the binary where the image puts it.
func TestManagerRunsTheImageBinary(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			found = true
			if len(c.Command) > 0 && c.Command[0] != ociimage.BinaryPath {
				t.Errorf("container %s runs %q; the image has the binary at %s", c.Name, c.Command[0], ociimage.BinaryPath)
			}
		}
	}
	if !found {
		t.Fatal("config/manager/manager.yaml has no Deployment container")
	}
}
