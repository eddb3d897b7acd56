package oci

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Image returns the descriptor of the image in the tar at tarPath, as its
// index.json names it: the image index's digest and size, and the
// reference in the annotations.
func Image(tarPath string) (v1.Descriptor, error) {
	f, err := os.Open(tarPath)
	if err != nil {
		return v1.Descriptor{}, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return v1.Descriptor{}, fmt.Errorf("%s: no index.json: not an OCI image layout", tarPath)
		}
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("%s: %w", tarPath, err)
		}
		if h.Name != "index.json" {
			continue
		}
		idx, err := v1.ParseIndexManifest(tr)
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("%s: index.json: %w", tarPath, err)
		}
		if len(idx.Manifests) != 1 {
			return v1.Descriptor{}, fmt.Errorf("%s: index.json lists %d images, want 1", tarPath, len(idx.Manifests))
		}
		return idx.Manifests[0], nil
	}
}

// ImageName returns the name of the image an index entry describes: the
// last element of the repository it was built for (jobset-agent for
// ghcr.io/fastjobset/jobset-agent:dev), the name it keeps in any registry.
func ImageName(desc v1.Descriptor) (string, error) {
	tag, err := name.NewTag(desc.Annotations[AnnotationContainerdName], name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("the image names no reference it was built for: %w", err)
	}
	return path.Base(tag.RepositoryStr()), nil
}

// Extract unpacks the tar at tarPath into dir, which then is an OCI image
// layout directory.
func Extract(tarPath, dir string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tarPath, err)
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("%s: entry %q leaves the layout", tarPath, h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if closeErr := out.Close(); err == nil {
				err = closeErr
			}
			if err != nil {
				return err
			}
		}
	}
}

// Index returns the image index the OCI layout directory dir names (as
// Extract leaves it) and its descriptor.
func Index(dir string) (v1.Descriptor, v1.ImageIndex, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return v1.Descriptor{}, nil, err
	}
	manifest, err := root.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, nil, err
	}
	if len(manifest.Manifests) != 1 || !manifest.Manifests[0].MediaType.IsIndex() {
		return v1.Descriptor{}, nil, fmt.Errorf("%s: index.json lists %d entries, want one image index", dir, len(manifest.Manifests))
	}
	desc := manifest.Manifests[0]
	idx, err := root.ImageIndex(desc.Digest)
	return desc, idx, err
}

// Platforms returns the images of idx by platform, os/architecture
// (linux/arm64).
func Platforms(idx v1.ImageIndex) (map[string]v1.Image, error) {
	manifest, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	images := map[string]v1.Image{}
	for _, desc := range manifest.Manifests {
		if desc.Platform == nil {
			return nil, fmt.Errorf("index entry %s names no platform", desc.Digest)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		images[desc.Platform.String()] = img
	}
	return images, nil
}
