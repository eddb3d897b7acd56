package images_test

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"flag"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/internal/oci"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

var qemuAgent = flag.String("qemu-agent", "", "The agent binary built for linux/arm64, to run under qemu-user-static.")

// platforms are those every shipped image is built for, in -images order.
var platforms = []string{"linux/amd64", "linux/arm64"}

// elfMachine is the ELF machine of a binary built for each architecture.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// platformImages reads the image index of the tar at tarPath, by platform.
func platformImages(t *testing.T, tarPath string) map[string]v1.Image {
	t.Helper()
	dir := t.TempDir()
	if err := oci.Extract(tarPath, dir); err != nil {
		t.Fatal(err)
	}
	desc, idx, err := oci.Index(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want, err := oci.Image(tarPath); err != nil || want.Digest != desc.Digest {
		t.Fatalf("%s: index.json names %s, the layout's index is %s (%v)", tarPath, want.Digest, desc.Digest, err)
	}
	images, err := oci.Platforms(idx)
	if err != nil {
		t.Fatal(err)
	}
	return images
}

// TestImagesAreMultiArch: each shipped image is one index of a linux/amd64
// and a linux/arm64 image, each configured for its architecture, and every
// binary in each is built for that architecture, static, and carries the
// Go build information of its modules for it.
func TestImagesAreMultiArch(t *testing.T) {
	if *builtFrom == "" {
		t.Skip("checks the images Bazel builds: run `bazel test //images:images_test`")
	}
	for _, image := range builtImages(t) {
		t.Run(image.files[0].inImage, func(t *testing.T) {
			images := platformImages(t, image.tar)
			if got := slices.Sorted(maps.Keys(images)); !slices.Equal(got, platforms) {
				t.Fatalf("the index lists %v, want %v", got, platforms)
			}
			for _, platform := range platforms {
				arch := strings.TrimPrefix(platform, "linux/")
				cfg, err := images[platform].ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				if cfg.OS != "linux" || cfg.Architecture != arch {
					t.Errorf("the image indexed for %s is configured for %s/%s", platform, cfg.OS, cfg.Architecture)
				}
				binaries := executables(t, images[platform])
				if len(binaries) != len(image.files)/len(platforms) {
					t.Errorf("%s: executables %v, want %d", platform, slices.Sorted(maps.Keys(binaries)), len(image.files)/len(platforms))
				}
				for path, data := range binaries {
					f, err := elf.NewFile(bytes.NewReader(data))
					if err != nil {
						t.Fatalf("%s %s: %v", platform, path, err)
					}
					if f.Machine != elfMachine[arch] {
						t.Errorf("%s %s is built for %s, want %s", platform, path, f.Machine, elfMachine[arch])
					}
					info, err := buildinfo.Read(bytes.NewReader(data))
					if err != nil {
						t.Fatalf("%s %s: %v", platform, path, err)
					}
					settings := map[string]string{}
					for _, s := range info.Settings {
						settings[s.Key] = s.Value
					}
					if !strings.HasSuffix(info.Path, path) || settings["GOARCH"] != arch || len(info.Deps) == 0 {
						t.Errorf("%s %s carries the build information of %s for GOARCH %q with %d modules: want its own package for %s, with its modules (images/modinfo.bzl)", platform, path, info.Path, settings["GOARCH"], len(info.Deps), arch)
					}
				}
			}
		})
	}
}

// executables reads the executable files of img's only layer, by path.
func executables(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	found := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return found
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		found["/"+h.Name] = data
	}
}

// TestArm64AgentRuns runs the arm64 agent under Debian's qemu-user-static
// (installed by .ci/run), as an arm64 node would run it.
func TestArm64AgentRuns(t *testing.T) {
	if *qemuAgent == "" {
		t.Skip("runs the agent Bazel builds: run `bazel test //images:images_test`")
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Fatalf("no qemu-aarch64-static on PATH: install Debian's qemu-user-static (`apt-get install qemu-user-static`, as .ci/run does)")
	}
	out, err := exec.Command(qemu, runfiles.Path(*qemuAgent), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("the arm64 agent under %s: %v\n%s", qemu, err, out)
	}
	if !strings.Contains(string(out), version.Version) {
		t.Errorf("the arm64 agent's --version says %q, want version %s", out, version.Version)
	}
}
