package oci

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Image returns the descriptor of the image in the tar at path, as its
// index names it: digest, size, and reference in the annotations.
func Image(path string) (Descriptor, error) {
	f, err := os.Open(path)
	if err != nil {
		return Descriptor{}, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return Descriptor{}, fmt.Errorf("%s: no index.json: not an OCI image layout", path)
		}
		if err != nil {
			return Descriptor{}, fmt.Errorf("%s: %w", path, err)
		}
		if h.Name != "index.json" {
			continue
		}
		var idx index
		if err := json.NewDecoder(tr).Decode(&idx); err != nil {
			return Descriptor{}, fmt.Errorf("%s: index.json: %w", path, err)
		}
		if len(idx.Manifests) != 1 {
			return Descriptor{}, fmt.Errorf("%s: index.json lists %d images, want 1", path, len(idx.Manifests))
		}
		return idx.Manifests[0], nil
	}
}

// Extract unpacks the tar at path into dir, which then is an OCI image
// layout directory.
func Extract(path, dir string) error {
	f, err := os.Open(path)
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
			return fmt.Errorf("%s: %w", path, err)
		}
		name := filepath.Clean(h.Name)
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("%s: entry %q leaves the layout", path, h.Name)
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
