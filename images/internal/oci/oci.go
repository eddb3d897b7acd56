// Package oci writes single-layer, FROM-scratch container images as one tar
// file that is both an OCI image layout (index.json, blobs/) and a docker
// archive (manifest.json), so that `ctr images import`, `docker load`,
// skopeo and go-containerregistry all read it.
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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// Media types of what the image is made of.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// Annotations on the index entry that name the image for importers.
const (
	// AnnotationRefName is the OCI layout's name of the entry: its tag.
	AnnotationRefName = "org.opencontainers.image.ref.name"
	// AnnotationContainerdName is the full reference `ctr images import`
	// stores the image under.
	AnnotationContainerdName = "io.containerd.image.name"
)

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

// Spec describes an image.
type Spec struct {
	// Reference names the image, e.g. ghcr.io/fastjobset/jobset-agent:dev.
	Reference  string
	Entrypoint []string
	Files      []File
	Labels     map[string]string
}

// Descriptor points at a blob.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform is the OS and architecture an image runs on.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

type config struct {
	Created      time.Time       `json:"created"`
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       rootFS          `json:"rootfs"`
}

type containerConfig struct {
	User       string            `json:"User"`
	Env        []string          `json:"Env"`
	Entrypoint []string          `json:"Entrypoint"`
	WorkingDir string            `json:"WorkingDir"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// dockerManifest is one entry of a docker archive's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// Write writes the image spec describes to w, and returns the digest of its
// manifest: the digest a registry reports once it is pushed.
func Write(w io.Writer, spec Spec) (string, error) {
	_, tag, err := splitReference(spec.Reference)
	if err != nil {
		return "", err
	}
	layerTar, err := rootFSTar(spec.Files)
	if err != nil {
		return "", err
	}
	layer, err := gzipped(layerTar)
	if err != nil {
		return "", err
	}
	cfg, err := json.Marshal(config{
		Created:      epoch,
		Architecture: "amd64",
		OS:           "linux",
		Config: containerConfig{
			User:       fmt.Sprintf("%d:%d", NonRoot, NonRoot),
			Env:        []string{"PATH=/"},
			Entrypoint: spec.Entrypoint,
			WorkingDir: "/",
			Labels:     spec.Labels,
		},
		RootFS: rootFS{Type: "layers", DiffIDs: []string{digestOf(layerTar)}},
	})
	if err != nil {
		return "", err
	}
	configDesc := describe(MediaTypeConfig, cfg)
	layerDesc := describe(MediaTypeLayer, layer)
	man, err := json.Marshal(manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, Config: configDesc, Layers: []Descriptor{layerDesc}})
	if err != nil {
		return "", err
	}
	manDesc := describe(MediaTypeManifest, man)
	manDesc.Platform = &Platform{Architecture: "amd64", OS: "linux"}
	manDesc.Annotations = map[string]string{AnnotationRefName: tag, AnnotationContainerdName: spec.Reference}
	idx, err := json.Marshal(index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{manDesc}})
	if err != nil {
		return "", err
	}
	docker, err := json.Marshal([]dockerManifest{{
		Config:   blobPath(configDesc.Digest),
		RepoTags: []string{spec.Reference},
		Layers:   []string{blobPath(layerDesc.Digest)},
	}})
	if err != nil {
		return "", err
	}

	out := tar.NewWriter(w)
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := out.WriteHeader(dirHeader(dir, 0o755)); err != nil {
			return "", err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", idx},
		{"manifest.json", docker},
		{blobPath(configDesc.Digest), cfg},
		{blobPath(layerDesc.Digest), layer},
		{blobPath(manDesc.Digest), man},
	} {
		if err := writeFile(out, f.name, 0o644, f.data); err != nil {
			return "", err
		}
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	return manDesc.Digest, nil
}

// rootFSTar is the image's only layer: the files, with every directory
// above them, root-owned and dated at the epoch, in path order; /etc/passwd
// and /etc/group name the nonroot user; /tmp is writable by all.
func rootFSTar(files []File) ([]byte, error) {
	all := append([]File{
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRoot, NonRoot))},
		{Path: "/etc/group", Mode: 0o644, Data: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRoot))},
	}, files...)
	dirs := map[string]int64{"tmp/": 0o1777}
	byPath := map[string]File{}
	for _, f := range all {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("image file %q: the path must be absolute and clean", f.Path)
		}
		name := strings.TrimPrefix(f.Path, "/")
		if _, dup := byPath[name]; dup {
			return nil, fmt.Errorf("image file %q given twice", f.Path)
		}
		byPath[name] = f
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if _, ok := dirs[d+"/"]; !ok {
				dirs[d+"/"] = 0o755
			}
		}
	}
	names := make([]string, 0, len(dirs)+len(byPath))
	for d := range dirs {
		names = append(names, d)
	}
	for n := range byPath {
		names = append(names, n)
	}
	sort.Strings(names)

	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, n := range names {
		var err error
		if mode, isDir := dirs[n]; isDir {
			err = tw.WriteHeader(dirHeader(n, mode))
		} else {
			f := byPath[n]
			err = writeFile(tw, n, f.Mode, f.Data)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func dirHeader(name string, mode int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, ModTime: epoch, Format: tar.FormatPAX}
}

func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX,
	}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// gzipped compresses data with a header that carries no name and no time.
func gzipped(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func describe(mediaType string, blob []byte) Descriptor {
	return Descriptor{MediaType: mediaType, Digest: digestOf(blob), Size: int64(len(blob))}
}

func digestOf(blob []byte) string {
	sum := sha256.Sum256(blob)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blobPath(digest string) string {
	return "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:")
}

// splitReference splits a reference such as registry:5000/team/name:tag
// into its repository and its tag.
func splitReference(reference string) (repository, tag string, err error) {
	slash := strings.LastIndex(reference, "/")
	colon := strings.LastIndex(reference, ":")
	if reference == "" || colon <= slash || colon == len(reference)-1 || strings.Contains(reference, "@") {
		return "", "", fmt.Errorf("image reference %q: want <repository>:<tag>, for example ghcr.io/fastjobset/jobset-agent:dev", reference)
	}
	return reference[:colon], reference[colon+1:], nil
}

// ImageName returns the name of the image an index entry describes: the
// last element of the repository it was built for (jobset-agent for
// ghcr.io/fastjobset/jobset-agent:dev), the name it keeps in any registry.
func (d Descriptor) ImageName() (string, error) {
	repository, _, err := splitReference(d.Annotations[AnnotationContainerdName])
	if err != nil {
		return "", fmt.Errorf("the image names no reference it was built for: %w", err)
	}
	return path.Base(repository), nil
}
