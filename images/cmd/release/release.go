package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fastjobset/jobset/api/version"
)

// options say what goes into the release and where.
type options struct {
	renderManifests                                  string
	crd, controllerRBAC, webhookRBAC, webhookConfigs string
	registry, tag                                    string
	images                                           []string
	plugins                                          []string
	out                                              string
}

// write writes the release folder o.out, which must be new or empty.
func write(o options) error {
	if len(o.images) != 3 {
		return fmt.Errorf("got %d -image flags, want the controller's, the webhook's and the agent's image tars", len(o.images))
	}
	plugins, err := pluginBinaries(o.plugins)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(o.out); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new or empty folder, so that the release holds nothing else", o.out)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	// install.yaml, the agent's manifests, monitoring and the chart come from
	// the one renderer, pinned to the images' digests.
	chartDir := filepath.Join(work, "jobset")
	render := exec.Command(o.renderManifests,
		"-install", filepath.Join(o.out, "install.yaml"),
		"-agent-rbac-dir", filepath.Join(o.out, "agent"),
		"-monitoring-dir", filepath.Join(o.out, "monitoring"),
		"-chart-dir", chartDir,
		"-crd", o.crd, "-controller-rbac", o.controllerRBAC, "-webhook-rbac", o.webhookRBAC, "-webhook-configs", o.webhookConfigs,
		"-registry", o.registry, "-tag", o.tag,
		"-pin-digests", strings.Join(o.images, ","))
	if output, err := render.CombinedOutput(); err != nil {
		return fmt.Errorf("render-manifests: %w\n%s", err, output)
	}

	tgz, err := chartArchive(chartDir, "jobset")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, chartArchiveName()), tgz, 0o644); err != nil {
		return err
	}
	if err := writeChartLayout(filepath.Join(o.out, "chart"), chartDir, tgz); err != nil {
		return err
	}
	if err := writeSBOMs(filepath.Join(o.out, "sbom"), o.images); err != nil {
		return err
	}
	if err := writePlugins(o.out, plugins); err != nil {
		return err
	}
	return writeChecksums(o.out)
}

// chartArchiveName is the name `helm package` gives the chart.
func chartArchiveName() string { return "jobset-" + version.Version + ".tgz" }

// checksumsFile lists the SHA-256 of every other file of the release.
const checksumsFile = "SHA256SUMS"

// writeChecksums writes dir/SHA256SUMS in sha256sum's format, one line per
// file under dir by its slash-separated relative path, sorted.
func writeChecksums(dir string) error {
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel == checksumsFile {
			return errors.New(checksumsFile + " exists already")
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+filepath.ToSlash(rel)+"\n")
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return os.WriteFile(filepath.Join(dir, checksumsFile), []byte(strings.Join(lines, "")), 0o644)
}
