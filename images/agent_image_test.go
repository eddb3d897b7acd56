package images_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// Injection runs the agent's image as an init container that copies the
// worker wrapper out of it (agentspec.WrapperImagePath): the image must
// ship the wrapper Bazel built, executable, and static, as it runs in
// worker images of every kind.
func TestAgentImageShipsTheWrapper(t *testing.T) {
	if *builtFrom == "" {
		t.Skip("checks the images Bazel builds: run `bazel test //images:images_test`")
	}
	var tarPath string
	var wrappers []string // amd64's, then arm64's
	for _, image := range builtImages(t) {
		if image.files[0].inImage != "/jobset-agent" {
			continue
		}
		tarPath = image.tar
		for _, f := range image.files[1:] {
			if f.inImage == agentspec.WrapperImagePath {
				wrappers = append(wrappers, f.binary)
			}
		}
	}
	if tarPath == "" || len(wrappers) != len(platforms) {
		t.Fatalf("-images names no agent image shipping %s on %v: %s", agentspec.WrapperImagePath, platforms, *builtFrom)
	}
	for i, wrapper := range wrappers {
		want, err := os.ReadFile(wrapper)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(want, []byte("github.com/fastjobset/jobset/agent/wrapper.")) {
			t.Fatalf("%s holds no function of package wrapper: not the wrapper", wrapper)
		}

		mode, got := fileInImage(t, tarPath, platforms[i], agentspec.WrapperImagePath)
		if !bytes.Equal(got, want) {
			t.Errorf("the agent image's %s for %s is not the wrapper Bazel built", agentspec.WrapperImagePath, platforms[i])
		}
		if mode&0o555 != 0o555 {
			t.Errorf("%s has mode %o: the installer, user 65532, must read and run it", agentspec.WrapperImagePath, mode)
		}
		f, err := elf.NewFile(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s for %s is linked dynamically: it would not run in a worker image without the same libc", agentspec.WrapperImagePath, platforms[i])
			}
		}
	}
}

// fileInImage reads a regular file from the only layer of the image for
// platform (linux/arm64) in the tar at tarPath.
func fileInImage(t *testing.T, tarPath, platform, path string) (int64, []byte) {
	t.Helper()
	img := platformImages(t, tarPath)[platform]
	if img == nil {
		t.Fatalf("%s has no image for %s", tarPath, platform)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the image has no %s", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if "/"+h.Name != path {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		return h.Mode, data
	}
}
