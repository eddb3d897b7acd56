// Command build-image writes a FROM-scratch image holding one static
// binary, run as the nonroot user, and any further executables it ships
// (-file), as an OCI layout + docker archive tar (see package oci). The
// Bazel macro go_image in images/image.bzl calls it.
//
//	build-image -binary bazel-bin/.../jobset-agent -path /jobset-agent \
//	  -file /jobset-wrapper=bazel-bin/.../jobset-wrapper \
//	  -repository ghcr.io/fastjobset/jobset-agent -out jobset-agent.tar
//
// The image is named <repository>:<tag>, the tag being the release's
// (api/version/VERSION) unless -tag says otherwise, so that the images and
// the binaries in them carry one version.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/internal/oci"
)

func main() {
	binary := flag.String("binary", "", "The static binary to put into the image.")
	inImage := flag.String("path", "", "Absolute path of the binary in the image; also the entrypoint.")
	repository := flag.String("repository", "", "Repository the image is named for, e.g. ghcr.io/fastjobset/jobset-agent.")
	tag := flag.String("tag", version.Tag, "Tag of the image (default: the release's, from api/version/VERSION).")
	out := flag.String("out", "", "The tar file to write.")
	var extra []extraFile
	flag.Func("file", "A further executable of the image, /path/in/image=file on disk (repeatable).", func(kv string) error {
		inImage, onDisk, ok := strings.Cut(kv, "=")
		if !ok || inImage == "" || onDisk == "" {
			return fmt.Errorf("want /path/in/image=file, got %q", kv)
		}
		extra = append(extra, extraFile{inImage, onDisk})
		return nil
	})
	labels := map[string]string{}
	flag.Func("label", "An image label key=value (repeatable).", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("want key=value, got %q", kv)
		}
		labels[k] = v
		return nil
	})
	flag.Parse()
	for name, v := range map[string]string{"-binary": *binary, "-path": *inImage, "-repository": *repository, "-tag": *tag, "-out": *out} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "build-image: %s is required\n", name)
			os.Exit(2)
		}
	}
	if err := run(*binary, *inImage, *repository+":"+*tag, *out, labels, extra); err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

// extraFile is an executable the image ships beside its entrypoint (the
// agent's image ships the worker wrapper, which an init container copies
// out of it).
type extraFile struct{ inImage, onDisk string }

func run(binary, inImage, reference, out string, labels map[string]string, extra []extraFile) error {
	data, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	files := []oci.File{{Path: inImage, Mode: 0o755, Data: data}}
	for _, e := range extra {
		data, err := os.ReadFile(e.onDisk)
		if err != nil {
			return err
		}
		files = append(files, oci.File{Path: e.inImage, Mode: 0o755, Data: data})
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	_, err = oci.Write(w, oci.Spec{
		Reference:  reference,
		Entrypoint: []string{inImage},
		Files:      files,
		Labels:     labels,
	})
	if err == nil {
		err = w.Flush()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}
