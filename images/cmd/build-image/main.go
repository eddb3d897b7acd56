// Command build-image writes a FROM-scratch image holding one static
// binary, run as the nonroot user, and any further executables it ships
// (-file), as an OCI layout + docker archive tar (see package oci). The
// Bazel macro go_image in images/image.bzl calls it.
//
//	build-image -binary bazel-bin/.../jobset-agent -path /jobset-agent \
//	  -file /jobset-wrapper=bazel-bin/.../jobset-wrapper \
//	  -binary bazel-bin/.../jobset-agent_arm64 \
//	  -file /jobset-wrapper=bazel-bin/.../jobset-wrapper_arm64 \
//	  -repository ghcr.io/fastjobset/jobset-agent -out jobset-agent.tar
//
// Each -binary and -file is a Linux ELF executable: the image has one
// platform per architecture the binaries are built for, read from their
// ELF headers, and each -file goes to the platform of its own header, so
// that no binary can land in another architecture's image. Every platform
// gets one -binary and the same -file paths.
//
// The image is named <repository>:<tag>, the tag being the release's
// (api/version/VERSION) unless -tag says otherwise, so that the images and
// the binaries in them carry one version.
package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/internal/oci"
)

func main() {
	var binaries []string
	flag.Func("binary", "The static binary to put into the image, once per architecture (repeatable).", func(path string) error {
		binaries = append(binaries, path)
		return nil
	})
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
	if len(binaries) == 0 {
		fmt.Fprintln(os.Stderr, "build-image: -binary is required")
		os.Exit(2)
	}
	for name, v := range map[string]string{"-path": *inImage, "-repository": *repository, "-tag": *tag, "-out": *out} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "build-image: %s is required\n", name)
			os.Exit(2)
		}
	}
	if err := run(binaries, *inImage, *repository+":"+*tag, *out, labels, extra); err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

// extraFile is an executable the image ships beside its entrypoint (the
// agent's image ships the worker wrapper, which an init container copies
// out of it).
type extraFile struct{ inImage, onDisk string }

func run(binaries []string, inImage, reference, out string, labels map[string]string, extra []extraFile) error {
	variants, err := variants(binaries, inImage, extra)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	_, err = oci.Write(w, oci.Spec{
		Reference:  reference,
		Entrypoint: []string{inImage},
		Variants:   variants,
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

// variants sorts the binaries and further files into one image per
// architecture, by their ELF headers.
func variants(binaries []string, inImage string, extra []extraFile) ([]oci.Variant, error) {
	byArch := map[string]*oci.Variant{}
	var archs []string
	for _, binary := range binaries {
		data, arch, err := readExecutable(binary)
		if err != nil {
			return nil, err
		}
		if v, ok := byArch[arch]; ok {
			return nil, fmt.Errorf("-binary %s and -binary %s are both for %s: give one binary per architecture", v.Files[0].Path, binary, arch)
		}
		byArch[arch] = &oci.Variant{
			Platform: v1.Platform{OS: "linux", Architecture: arch},
			Files:    []oci.File{{Path: inImage, Mode: 0o755, Data: data}},
		}
		archs = append(archs, arch)
	}
	for _, e := range extra {
		data, arch, err := readExecutable(e.onDisk)
		if err != nil {
			return nil, err
		}
		v, ok := byArch[arch]
		if !ok {
			return nil, fmt.Errorf("-file %s=%s is for %s, for which no -binary is given (the binaries are for %s)", e.inImage, e.onDisk, arch, strings.Join(archs, ", "))
		}
		v.Files = append(v.Files, oci.File{Path: e.inImage, Mode: 0o755, Data: data})
	}
	var out []oci.Variant
	for _, arch := range archs {
		v := byArch[arch]
		if got, want := paths(v.Files), paths(byArch[archs[0]].Files); got != want {
			return nil, fmt.Errorf("the %s image ships %s but the %s image %s: give each -file once per architecture", arch, got, archs[0], want)
		}
		out = append(out, *v)
	}
	return out, nil
}

// paths lists the files' paths, sorted.
func paths(files []oci.File) string {
	var p []string
	for _, f := range files {
		p = append(p, f.Path)
	}
	slices.Sort(p)
	return strings.Join(p, " ")
}

// goArch is the Go architecture of each ELF machine the images are built
// for.
var goArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
}

// readExecutable returns the content of the Linux ELF executable at path
// and the Go architecture it is built for.
func readExecutable(path string) ([]byte, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("%s is no ELF executable (build it for linux): %w", path, err)
	}
	arch, ok := goArch[f.Machine]
	if !ok {
		return nil, "", fmt.Errorf("%s is built for %s; the images are for amd64 (x86-64) and arm64 (aarch64)", path, f.Machine)
	}
	return data, arch, nil
}
