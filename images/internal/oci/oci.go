// Package oci builds single-layer, FROM-scratch container images with
// go-containerregistry, one per platform under one image index, and writes
// each as one tar file that is both an OCI image layout (index.json naming
// the image index, blobs/) and a docker archive (manifest.json, of the
// first platform's image: a docker archive holds one image per name), so
// that `ctr images import`, `docker load`, skopeo and go-containerregistry
// all read it.
//
// Images are reproducible: the same Spec gives the same bytes, whatever
// the files' times, owners or the order they were given in. Nothing is
// pulled: the base is empty, like distroless static minus what a static Go
// binary does not use.
package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"
)

// AnnotationContainerdName, on the index entry, is the full reference
// `ctr images import` stores the image under.
const AnnotationContainerdName = "io.containerd.image.name"

// NonRoot is the user distroless images call nonroot.
const NonRoot = 65532

// epoch is every file's and the image's time: a fixed one, for
// reproducibility.
var epoch = time.Unix(0, 0).UTC()

// File is a regular file of the image's root filesystem.
type File struct {
	// Path is absolute, e.g. /jobset-agent.
	Path string
	Mode int64
	Data []byte
}

// Spec describes an image: the same entrypoint and labels on every
// platform, each platform's own files.
type Spec struct {
	// Reference names the image, e.g. ghcr.io/fastjobset/jobset-agent:dev.
	Reference  string
	Entrypoint []string
	Labels     map[string]string
	// Variants are the platforms the image runs on, each with the files
	// built for it; at least one.
	Variants []Variant
}

// Variant is the image for one platform.
type Variant struct {
	Platform v1.Platform
	Files    []File
}

// Write writes the image spec describes to w, and returns the digest of its
// image index: the digest a registry reports once it is pushed.
func Write(w io.Writer, spec Spec) (v1.Hash, error) {
	// Strict: a reference without registry or tag would be completed by
	// each reader in its own way (docker.io or index.docker.io, latest),
	// and the image imported under one name looked up under another.
	tag, err := name.NewTag(spec.Reference, name.StrictValidation)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image reference %q: want <registry>/<repository>:<tag>, for example ghcr.io/fastjobset/jobset-agent:dev: %w", spec.Reference, err)
	}
	variants, err := sortedVariants(spec.Variants)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image %s: %w", spec.Reference, err)
	}
	var images []mutate.IndexAddendum
	for _, v := range variants {
		img, err := image(spec, v)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("image %s for %s: %w", spec.Reference, v.Platform, err)
		}
		images = append(images, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v.Platform}})
	}
	imageIndex := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, images...), types.OCIImageIndex)
	// The layout's own index.json names the image index, as a registry's
	// tag would: importers store the name and pick their platform from it.
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{
		Add: imageIndex,
		Descriptor: v1.Descriptor{
			Annotations: map[string]string{
				imagespec.AnnotationRefName: tag.TagStr(),
				AnnotationContainerdName:    spec.Reference,
			},
		},
	})

	dir, err := os.MkdirTemp("", "oci-layout-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(dir)
	if _, err := layout.Write(dir, idx); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the OCI layout of %s: %w", spec.Reference, err)
	}
	entries, err := layoutEntries(dir)
	if err != nil {
		return v1.Hash{}, err
	}
	first, ok := images[0].Add.(v1.Image)
	if !ok {
		return v1.Hash{}, fmt.Errorf("image %s: the first variant is no image", spec.Reference)
	}
	docker, err := dockerManifest(first, spec.Reference)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := writeTar(w, append(entries, entry{name: "manifest.json", mode: 0o644, data: docker})); err != nil {
		return v1.Hash{}, err
	}
	return imageIndex.Digest()
}

// sortedVariants checks that variants name distinct platforms, and orders
// them by platform, so that the index does not depend on the order given.
func sortedVariants(variants []Variant) ([]Variant, error) {
	if len(variants) == 0 {
		return nil, fmt.Errorf("no platform: give the files of at least one, for example linux/amd64")
	}
	sorted := slices.Clone(variants)
	slices.SortFunc(sorted, func(a, b Variant) int { return strings.Compare(a.Platform.String(), b.Platform.String()) })
	for i, v := range sorted {
		if v.Platform.OS == "" || v.Platform.Architecture == "" {
			return nil, fmt.Errorf("a variant names no platform (%q): want an OS and an architecture, for example linux/arm64", v.Platform.String())
		}
		if i > 0 && sorted[i-1].Platform.String() == v.Platform.String() {
			return nil, fmt.Errorf("platform %s given twice", v.Platform)
		}
	}
	return sorted, nil
}

// image is spec's image for one platform: an empty base, the
// configuration, and one layer.
func image(spec Spec, v Variant) (v1.Image, error) {
	var rootFS bytes.Buffer
	if err := writeRootFS(&rootFS, v.Files); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(rootFS.Bytes())), nil },
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.BestCompression),
		tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	base, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1), &v1.ConfigFile{
		Created:      v1.Time{Time: epoch},
		Architecture: v.Platform.Architecture,
		OS:           v.Platform.OS,
		Variant:      v.Platform.Variant,
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", NonRoot, NonRoot),
			Env:        []string{"PATH=/"},
			Entrypoint: spec.Entrypoint,
			WorkingDir: "/",
			Labels:     spec.Labels,
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(mutate.ConfigMediaType(base, types.OCIConfigJSON), mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "images/cmd/build-image"},
	})
}

// dockerManifest is the manifest.json of a docker archive holding img,
// pointing at the blobs of the OCI layout beside it, so that the archive
// costs no second copy of the layer.
func dockerManifest(img v1.Image, reference string) ([]byte, error) {
	config, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	m := tarball.Descriptor{Config: blobPath(config), RepoTags: []string{reference}}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, blobPath(d))
	}
	return json.Marshal(tarball.Manifest{m})
}

// blobPath is where an OCI layout keeps the blob of digest h.
func blobPath(h v1.Hash) string {
	return path.Join("blobs", h.Algorithm, h.Hex)
}

// writeRootFS writes the image's only layer: the files, with every
// directory above them, mode as given; /etc/passwd and /etc/group name the
// nonroot user; /tmp is writable by all.
func writeRootFS(w io.Writer, files []File) error {
	all := append([]File{
		{Path: "/etc/passwd", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRoot, NonRoot)},
		{Path: "/etc/group", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", NonRoot)},
	}, files...)
	dirs := map[string]int64{"tmp/": 0o1777}
	seen := map[string]bool{}
	var entries []entry
	for _, f := range all {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return fmt.Errorf("image file %q: the path must be absolute and clean", f.Path)
		}
		name := strings.TrimPrefix(f.Path, "/")
		if seen[name] {
			return fmt.Errorf("image file %q given twice", f.Path)
		}
		seen[name] = true
		entries = append(entries, entry{name: name, mode: f.Mode, data: f.Data})
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if _, ok := dirs[d+"/"]; !ok {
				dirs[d+"/"] = 0o755
			}
		}
	}
	for d, mode := range dirs {
		entries = append(entries, entry{name: d, mode: mode})
	}
	return writeTar(w, entries)
}

// layoutEntries reads the OCI layout directory dir, which layout.Write
// wrote with whatever modes and times the disk gave it, into entries with
// fixed modes.
func layoutEntries(dir string) ([]entry, error) {
	var entries []entry
	fsys := os.DirFS(dir)
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || name == ".":
			return err
		case d.IsDir():
			entries = append(entries, entry{name: name + "/", mode: 0o755})
			return nil
		case d.Type().IsRegular():
			data, err := fs.ReadFile(fsys, name)
			entries = append(entries, entry{name: name, mode: 0o644, data: data})
			return err
		default:
			return fmt.Errorf("OCI layout %s: %s is neither a file nor a directory", dir, name)
		}
	})
	return entries, err
}

// entry is a regular file or, if its name ends in "/", a directory.
type entry struct {
	name string
	mode int64
	data []byte
}

// writeTar writes entries as a tar in name order, each root-owned and dated
// at the epoch. It is the one piece written by hand: go-containerregistry
// writes layers from tars it is given, OCI layouts only to directories, and
// docker archives (tarball.Write) with blob names of their own, so neither
// the root filesystem nor one tar that is both formats can come from it.
func writeTar(w io.Writer, entries []entry) error {
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.data)), ModTime: epoch, Format: tar.FormatPAX}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}
