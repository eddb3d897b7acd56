package oci_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/fastjobset/jobset/images/internal/oci"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

func spec(files ...oci.File) oci.Spec {
	return oci.Spec{Reference: "ghcr.io/fastjobset/jobset-agent:dev", Entrypoint: []string{"/jobset-agent"}, Variants: []oci.Variant{{Platform: amd64, Files: files}}}
}

// twoPlatforms is spec(files...) for amd64, and for arm64 with each file's
// data prefixed "arm64 ", as a binary built for it would differ.
func twoPlatforms(files ...oci.File) oci.Spec {
	s := spec(files...)
	var armFiles []oci.File
	for _, f := range files {
		f.Data = append([]byte("arm64 "), f.Data...)
		armFiles = append(armFiles, f)
	}
	s.Variants = append(s.Variants, oci.Variant{Platform: arm64, Files: armFiles})
	return s
}

var (
	agent  = oci.File{Path: "/jobset-agent", Mode: 0o755, Data: []byte("agent binary")}
	config = oci.File{Path: "/etc/jobset/config", Mode: 0o644, Data: []byte("x")}
)

func write(t *testing.T, s oci.Spec) ([]byte, v1.Hash) {
	t.Helper()
	var b bytes.Buffer
	digest, err := oci.Write(&b, s)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), digest
}

func TestWriteIsReproducible(t *testing.T) {
	first, firstDigest := write(t, spec(agent, config))
	second, secondDigest := write(t, spec(config, agent))
	if !bytes.Equal(first, second) || firstDigest != secondDigest {
		t.Errorf("the same files in another order gave another image: %s vs %s", firstDigest, secondDigest)
	}
	changed := agent
	changed.Data = []byte("another agent binary")
	if _, d := write(t, spec(changed, config)); d == firstDigest {
		t.Error("other content gave the same digest")
	}
	multi := twoPlatforms(agent, config)
	multiFirst, multiDigest := write(t, multi)
	slices.Reverse(multi.Variants)
	if again, d := write(t, multi); !bytes.Equal(multiFirst, again) || d != multiDigest {
		t.Errorf("the same platforms in another order gave another image: %s vs %s", multiDigest, d)
	}

	// Two writes within a second would agree even if the disk's times or
	// owners leaked in: every entry, of the archive and of its layer, must
	// carry none.
	img, err := tarball.Image(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(first)), nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	layer, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer layer.Close()
	for what, r := range map[string]io.Reader{"archive": bytes.NewReader(first), "layer": layer} {
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !h.ModTime.Equal(time.Unix(0, 0)) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
				t.Errorf("%s entry %s: time %s, owner %d:%d (%q:%q); want the epoch and root", what, h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname)
			}
		}
	}
}

// TestImageIsValid reads the tar back as both formats it claims to be, and
// lets go-containerregistry check every digest, size and diff ID.
func TestImageIsValid(t *testing.T) {
	data, digest := write(t, twoPlatforms(agent))
	dir := t.TempDir()
	tarPath := filepath.Join(dir, "image.tar")
	if err := os.WriteFile(tarPath, data, 0o644); err != nil {
		t.Fatal(err)
	}

	desc, err := oci.Image(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest != digest || desc.Annotations[oci.AnnotationContainerdName] != "ghcr.io/fastjobset/jobset-agent:dev" || desc.Annotations[imagespec.AnnotationRefName] != "dev" {
		t.Errorf("index entry %+v: want digest %s and the reference in the annotations", desc, digest)
	}

	if name, err := oci.ImageName(desc); name != "jobset-agent" || err != nil {
		t.Errorf("ImageName = %q, %v; want jobset-agent", name, err)
	}

	layoutDir := filepath.Join(dir, "layout")
	if err := oci.Extract(tarPath, layoutDir); err != nil {
		t.Fatal(err)
	}
	if _, err := layout.ImageIndexFromPath(layoutDir); err != nil {
		t.Fatal(err)
	}
	indexDesc, idx, err := oci.Index(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	if indexDesc.Digest != digest {
		t.Errorf("oci.Index's digest %s, want %s", indexDesc.Digest, digest)
	}
	if err := validate.Index(idx); err != nil {
		t.Errorf("as an OCI layout: %v", err)
	}
	images, err := oci.Platforms(idx)
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 2 || images["linux/amd64"] == nil || images["linux/arm64"] == nil {
		t.Fatalf("platforms %v, want linux/amd64 and linux/arm64", slices.Sorted(maps.Keys(images)))
	}
	for platform, img := range images {
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Config.User != "65532:65532" || strings.Join(cfg.Config.Entrypoint, " ") != "/jobset-agent" {
			t.Errorf("%s config: user %q, entrypoint %v", platform, cfg.Config.User, cfg.Config.Entrypoint)
		}
		if got := cfg.Platform().String(); got != platform {
			t.Errorf("the image indexed for %s says it runs on %s", platform, got)
		}
		want := agent.Data
		if platform == "linux/arm64" {
			want = append([]byte("arm64 "), want...)
		}
		if got := fileOf(t, img, "jobset-agent"); !bytes.Equal(got, want) {
			t.Errorf("%s: /jobset-agent holds %q, want %q", platform, got, want)
		}
	}

	// A docker archive holds one image per name: the first platform's.
	dockerImg, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(dockerImg); err != nil {
		t.Errorf("as a docker archive: %v", err)
	}
	if got := fileOf(t, dockerImg, "jobset-agent"); !bytes.Equal(got, agent.Data) {
		t.Errorf("docker archive: /jobset-agent holds %q, want the linux/amd64 file", got)
	}
}

// fileOf returns the content of the file name in img's only layer.
func fileOf(t *testing.T, img v1.Image, name string) []byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want one", len(layers), err)
	}
	r, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in the layer: %v", name, err)
		}
		if h.Name == name {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
}

func TestWriteRejectsBadInput(t *testing.T) {
	for name, s := range map[string]oci.Spec{
		"reference without tag":      {Reference: "ghcr.io/fastjobset/jobset-agent", Variants: spec(agent).Variants},
		"reference without registry": {Reference: "jobset-agent:dev", Variants: spec(agent).Variants},
		"relative path":              spec(oci.File{Path: "jobset-agent"}),
		"file given twice":           spec(agent, agent),
		"no platform":                {Reference: "ghcr.io/fastjobset/jobset-agent:dev"},
		"platform given twice":       {Reference: "ghcr.io/fastjobset/jobset-agent:dev", Variants: append(spec(agent).Variants, spec(agent).Variants...)},
		"platform without an OS":     {Reference: "ghcr.io/fastjobset/jobset-agent:dev", Variants: []oci.Variant{{Platform: v1.Platform{Architecture: "arm64"}}}},
	} {
		if _, err := oci.Write(&bytes.Buffer{}, s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
