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

// Package ociimage builds tether's container image from the static binary,
// without a container engine: an empty base plus one layer, assembled with
// go-containerregistry and written as an OCI image layout and as a tarball
// that `docker load` and `podman load` accept.
package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	containerv1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed shape: where the binary lives and whom it runs as.
const (
	// BinaryPath is the binary's path in the image; the entrypoint.
	BinaryPath = "/usr/local/bin/tether"
	// UID is the non-root user and group the image runs as, distroless's
	// "nonroot", which Pod security admission's restricted profile accepts.
	UID = 65532
	// Home is the home directory of UID in the image.
	Home = "/home/nonroot"
)

// OCI annotation keys the image is labelled with.
const (
	LabelTitle    = "org.opencontainers.image.title"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelCreated  = "org.opencontainers.image.created"
	LabelLicenses = "org.opencontainers.image.licenses"
	// RefName is the OCI layout annotation naming the image in its index.
	RefName = "org.opencontainers.image.ref.name"
)

// Options says what to build and where to write it.
type Options struct {
	// Binary is the static tether binary to ship.
	Binary string
	// Tag names the image, e.g. "tether:v0.3.0", in the tarball and the
	// layout's index.
	Tag string
	// Version and Commit label the image.
	Version, Commit string
	// Created is the image's creation time and every file's modification
	// time; fixing it (to the commit's time) makes the image reproducible.
	Created time.Time
	// LayoutDir, when set, receives the image as an OCI image layout.
	LayoutDir string
	// Tarball, when set, receives the image as a `docker load` tarball.
	Tarball string
}

// Build assembles the image and writes it where opts says. It refuses a
// binary that is not a static ELF executable, since the image has no libc.
func Build(opts Options) (containerv1.Image, error) {
	if opts.LayoutDir == "" && opts.Tarball == "" {
		return nil, errors.New("ociimage: nothing to write: set a layout directory or a tarball path")
	}
	tag, err := name.NewTag(opts.Tag)
	if err != nil {
		return nil, fmt.Errorf("ociimage: tag %q: %w", opts.Tag, err)
	}
	bin, err := os.ReadFile(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("ociimage: %w", err)
	}
	arch, err := StaticArch(bytes.NewReader(bin))
	if err != nil {
		return nil, fmt.Errorf("ociimage: %s: %w", opts.Binary, err)
	}
	img, err := assemble(bin, arch, opts)
	if err != nil {
		return nil, err
	}
	if opts.Tarball != "" {
		if err := os.MkdirAll(filepath.Dir(opts.Tarball), 0o755); err != nil {
			return nil, err
		}
		if err := tarball.WriteToFile(opts.Tarball, tag, img); err != nil {
			return nil, fmt.Errorf("ociimage: writing %s: %w", opts.Tarball, err)
		}
	}
	if opts.LayoutDir != "" {
		// A layout is an append-only store; start from an empty one so the
		// directory holds exactly this image.
		if err := os.RemoveAll(opts.LayoutDir); err != nil {
			return nil, err
		}
		p, err := layout.Write(opts.LayoutDir, empty.Index)
		if err != nil {
			return nil, fmt.Errorf("ociimage: writing %s: %w", opts.LayoutDir, err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefName: tag.String()})); err != nil {
			return nil, fmt.Errorf("ociimage: writing %s: %w", opts.LayoutDir, err)
		}
	}
	return img, nil
}

func assemble(bin []byte, arch string, opts Options) (containerv1.Image, error) {
	layerTar, err := rootfs(bin, opts.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   containerv1.History{Created: containerv1.Time{Time: opts.Created}, CreatedBy: "tether ociimage: " + BinaryPath},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = containerv1.Time{Time: opts.Created}
	cf.Config = containerv1.Config{
		Entrypoint: []string{BinaryPath},
		User:       fmt.Sprintf("%d:%d", UID, UID),
		WorkingDir: Home,
		Env:        []string{"PATH=/usr/local/bin", "HOME=" + Home},
		Labels: map[string]string{
			LabelTitle:    "tether",
			LabelVersion:  opts.Version,
			LabelRevision: opts.Commit,
			LabelCreated:  opts.Created.UTC().Format(time.RFC3339),
			LabelLicenses: "Apache-2.0",
		},
	}
	return mutate.ConfigFile(img, cf)
}

// rootfs is the image's one layer: the binary, a passwd and group naming
// the non-root user (so user lookups work), its home and /tmp.
func rootfs(bin []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error {
			return file("etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, UID, Home))
		},
		func() error { return file("etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", UID)) },
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir(Home[1:], 0o700, UID) },
		func() error { return dir("tmp", 0o1777, 0) },
		func() error { return dir("usr", 0o755, 0) },
		func() error { return dir("usr/local", 0o755, 0) },
		func() error { return dir("usr/local/bin", 0o755, 0) },
		func() error { return file(BinaryPath[1:], 0o755, bin) },
		tw.Close,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("ociimage: building the layer: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// StaticArch returns the GOARCH of the ELF executable r, and an error when
// it is not a statically linked executable (it names an interpreter or
// shared libraries), since the image has no libc to run it.
func StaticArch(r io.ReaderAt) (string, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return "", fmt.Errorf("not an ELF executable: %w", err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("dynamically linked (it has an ELF interpreter): build with CGO_ENABLED=0")
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return "", fmt.Errorf("dynamically linked against %v: build with CGO_ENABLED=0", libs)
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return "", fmt.Errorf("unsupported machine %v", f.Machine)
}
