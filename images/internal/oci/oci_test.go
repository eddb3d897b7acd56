package oci_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/fastjobset/jobset/images/internal/oci"
)

func spec(files ...oci.File) oci.Spec {
	return oci.Spec{Reference: "ghcr.io/fastjobset/jobset-agent:dev", Entrypoint: []string{"/jobset-agent"}, Files: files}
}

var (
	agent  = oci.File{Path: "/jobset-agent", Mode: 0o755, Data: []byte("agent binary")}
	config = oci.File{Path: "/etc/jobset/config", Mode: 0o644, Data: []byte("x")}
)

func write(t *testing.T, s oci.Spec) ([]byte, string) {
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
	if desc.Digest != digest || desc.Annotations[oci.AnnotationContainerdName] != "ghcr.io/fastjobset/jobset-agent:dev" || desc.Annotations[oci.AnnotationRefName] != "dev" {
		t.Errorf("index entry %+v: want digest %s and the reference in the annotations", desc, digest)
	}

	if name, err := desc.ImageName(); name != "jobset-agent" || err != nil {
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
	h, err := v1.NewHash(digest)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(h)
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
		"reference without tag": {Reference: "ghcr.io/fastjobset/jobset-agent", Files: []oci.File{agent}},
		"relative path":         spec(oci.File{Path: "jobset-agent"}),
		"file given twice":      spec(agent, agent),
	} {
		if _, err := oci.Write(&bytes.Buffer{}, s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
