package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"
	"sigs.k8s.io/yaml"
)

// The media types Helm gives a chart pushed to an OCI registry.
const (
	helmConfigMediaType = types.MediaType("application/vnd.cncf.helm.config.v1+json")
	helmChartMediaType  = types.MediaType("application/vnd.cncf.helm.chart.content.v1.tar+gzip")
)

// chartArchive is the chart in dir packaged as `helm package` does, every
// file under <name>/, but reproducibly: sorted, root-owned, dated at the
// epoch, with an empty gzip header.
func chartArchive(dir, name string) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	// WalkDir visits in lexical order.
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: path.Join(name, filepath.ToSlash(rel)), Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeChartLayout writes the chart as the OCI artifact `helm push` makes
// (its Chart.yaml as the config, the archive as the one layer) into an
// OCI image layout directory dir, tagged with the chart's version, for
// `oras cp`, skopeo, crane or any OCI tool to push.
func writeChartLayout(dir, chartDir string, archive []byte) error {
	chartYAML, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return err
	}
	config, err := yaml.YAMLToJSON(chartYAML)
	if err != nil {
		return fmt.Errorf("the chart's Chart.yaml: %w", err)
	}
	var meta struct{ Name, Version, Description string }
	if err := json.Unmarshal(config, &meta); err != nil {
		return fmt.Errorf("the chart's Chart.yaml: %w", err)
	}
	blobs := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return err
	}
	blob := func(mediaType types.MediaType, data []byte) (v1.Descriptor, error) {
		sum := sha256.Sum256(data)
		hexSum := hex.EncodeToString(sum[:])
		desc := v1.Descriptor{MediaType: mediaType, Size: int64(len(data)), Digest: v1.Hash{Algorithm: "sha256", Hex: hexSum}}
		return desc, os.WriteFile(filepath.Join(blobs, hexSum), data, 0o644)
	}
	configDesc, err := blob(helmConfigMediaType, config)
	if err != nil {
		return err
	}
	layerDesc, err := blob(helmChartMediaType, archive)
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        configDesc,
		Layers:        []v1.Descriptor{layerDesc},
		Annotations: map[string]string{
			imagespec.AnnotationTitle:       meta.Name,
			imagespec.AnnotationVersion:     meta.Version,
			imagespec.AnnotationDescription: meta.Description,
		},
	})
	if err != nil {
		return err
	}
	manifestDesc, err := blob(types.OCIManifestSchema1, manifest)
	if err != nil {
		return err
	}
	manifestDesc.Annotations = map[string]string{imagespec.AnnotationRefName: meta.Version}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests:     []v1.Descriptor{manifestDesc},
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, imagespec.ImageLayoutFile), []byte(`{"imageLayoutVersion":"`+imagespec.ImageLayoutVersion+`"}`), 0o644)
}
