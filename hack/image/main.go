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

// Command image builds tether's container image from the static binary
// without a container engine (`make image`); see internal/ociimage.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/tether-dev/tether/internal/ociimage"
)

func main() {
	var o ociimage.Options
	flag.StringVar(&o.Binary, "binary", "bin/tether", "the static tether binary")
	flag.StringVar(&o.Tag, "tag", "tether:latest", "the image's name and tag")
	flag.StringVar(&o.Version, "version", "", "the version label")
	flag.StringVar(&o.Commit, "commit", "", "the revision label")
	flag.StringVar(&o.LayoutDir, "oci-layout", "bin/image/oci", "where to write the OCI image layout (empty: none)")
	flag.StringVar(&o.Tarball, "tarball", "bin/image/tether.tar", "where to write the docker-load tarball (empty: none)")
	flag.Parse()
	// SOURCE_DATE_EPOCH is the reproducible-builds convention for a fixed
	// build time; the Makefile sets it to the commit's time.
	o.Created = time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "image: SOURCE_DATE_EPOCH=%q: not a number of seconds\n", s)
			os.Exit(2)
		}
		o.Created = time.Unix(sec, 0).UTC()
	}
	img, err := ociimage.Build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	digest, err := img.Digest()
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Printf("%s@%s\n", o.Tag, digest)
	if o.LayoutDir != "" {
		fmt.Printf("  OCI layout: %s\n", o.LayoutDir)
	}
	if o.Tarball != "" {
		fmt.Printf("  tarball:    %s (docker load -i %s)\n", o.Tarball, o.Tarball)
	}
}
