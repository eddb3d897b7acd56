package oci_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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

func spec(files ...oci.File) oci.Spec {
	return oci.Spec{Reference: "ghcr.io/fastjobset/jobset-agent:dev", Entrypoint: []string{"/jobset-agent"}, Files: files}
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
	data, digest := write(t, spec(agent))
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
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Errorf("as an OCI layout: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || strings.Join(cfg.Config.Entrypoint, " ") != "/jobset-agent" {
		t.Errorf("config: user %q, entrypoint %v", cfg.Config.User, cfg.Config.Entrypoint)
	}

	dockerImg, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(dockerImg); err != nil {
		t.Errorf("as a docker archive: %v", err)
	}
}

func TestWriteRejectsBadInput(t *testing.T) {
	for name, s := range map[string]oci.Spec{
		"reference without tag":      {Reference: "ghcr.io/fastjobset/jobset-agent", Files: []oci.File{agent}},
		"reference without registry": {Reference: "jobset-agent:dev", Files: []oci.File{agent}},
		"relative path":              spec(oci.File{Path: "jobset-agent"}),
		"file given twice":           spec(agent, agent),
	} {
		if _, err := oci.Write(&bytes.Buffer{}, s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
