package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	spdxjson "github.com/spdx/tools-golang/json"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/internal/oci"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// Set by the Bazel target: the command, the flags //images:release runs it
// with, and the checked-in manifests the release must carry unchanged.
var (
	release      = flag.String("release", "", "The release command.")
	releaseFlags = flag.String("release-flags", "", "Space-separated flags //images:release passes, with runfiles paths.")
	agentRBAC    = flag.String("agent-rbac", "", "Space-separated checked-in agent/rbac files.")
	monitoring   = flag.String("monitoring", "", "Space-separated checked-in monitoring files.")
)

// runRelease runs the command as //images:release does, into out.
func runRelease(t *testing.T, out string) ([]byte, error) {
	t.Helper()
	if *release == "" {
		t.Skip("runs the release command Bazel builds: run `bazel test //images/cmd/release:release_test`")
	}
	var args []string
	for _, f := range strings.Fields(*releaseFlags) {
		name, value, _ := strings.Cut(f, "=")
		args = append(args, name+"="+runfiles.Path(value))
	}
	// The plugin's cross builds are left to //images:release: fakes of
	// them here, one per platform.
	for _, p := range fakePlugins(t, t.TempDir(), pluginPlatforms...) {
		args = append(args, "-plugin="+p)
	}
	cmd := exec.Command(runfiles.Path(*release), append(args, out)...)
	cmd.Env = append(os.Environ(), "BUILD_WORKING_DIRECTORY=")
	return cmd.CombinedOutput()
}

// imageTars are the -image flags of the release command, by image name.
func imageTars(t *testing.T) map[string]string {
	tars := map[string]string{}
	for _, f := range strings.Fields(*releaseFlags) {
		if value, ok := strings.CutPrefix(f, "-image="); ok {
			desc, err := oci.Image(runfiles.Path(value))
			if err != nil {
				t.Fatal(err)
			}
			name, err := oci.ImageName(desc)
			if err != nil {
				t.Fatal(err)
			}
			tars[name] = runfiles.Path(value)
		}
	}
	if len(tars) != 3 {
		t.Fatalf("-release-flags name images %v, want three", tars)
	}
	return tars
}

// TestReleaseFolder writes a release and checks every artifact in it.
func TestReleaseFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "release")
	if output, err := runRelease(t, out); err != nil {
		t.Fatalf("release: %v\n%s", err, output)
	}
	tars := imageTars(t)

	t.Run("install.yaml is pinned by digest", func(t *testing.T) {
		install := read(t, filepath.Join(out, "install.yaml"))
		refs := regexp.MustCompile(`(?m)^\s*image: (\S+)$`).FindAllStringSubmatch(install, -1)
		if len(refs) == 0 {
			t.Fatal("install.yaml runs no image")
		}
		for _, ref := range refs {
			name := strings.Split(filepath.Base(ref[1]), ":")[0]
			desc, err := oci.Image(tars[name])
			if err != nil {
				t.Fatalf("install.yaml runs %s, which is not a released image: %v", ref[1], err)
			}
			if want := "ghcr.io/fastjobset/" + name + ":" + version.Tag + "@" + desc.Digest.String(); ref[1] != want {
				t.Errorf("install.yaml runs %s, want %s", ref[1], want)
			}
		}
	})

	t.Run("agent and monitoring manifests are the checked-in ones", func(t *testing.T) {
		for dir, files := range map[string]string{"agent": *agentRBAC, "monitoring": *monitoring} {
			checkedIn := strings.Fields(files)
			if len(checkedIn) == 0 {
				t.Fatalf("no checked-in %s files given", dir)
			}
			for _, f := range checkedIn {
				if got, want := read(t, filepath.Join(out, dir, filepath.Base(f))), read(t, runfiles.Path(f)); got != want {
					t.Errorf("%s/%s differs from the checked-in %s", dir, filepath.Base(f), f)
				}
			}
			if got := len(listFiles(t, filepath.Join(out, dir))); got != len(checkedIn) {
				t.Errorf("%s/ holds %d files, want the %d checked in", dir, got, len(checkedIn))
			}
		}
	})

	tgzPath := filepath.Join(out, "jobset-"+version.Version+".tgz")
	tgz := []byte(read(t, tgzPath))
	t.Run("chart archive", func(t *testing.T) {
		files := tgzFiles(t, tgz)
		for _, want := range []string{"jobset/Chart.yaml", "jobset/values.yaml", "jobset/values.schema.json", "jobset/templates/controller.yaml"} {
			if _, ok := files[want]; !ok {
				t.Errorf("the chart archive has no %s (it has %v)", want, slices.Sorted(maps.Keys(files)))
			}
		}
		for name, tarPath := range tars {
			desc, err := oci.Image(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(files["jobset/values.yaml"], desc.Digest.String()) {
				t.Errorf("the chart's values.yaml does not pin %s to %s", name, desc.Digest)
			}
		}
		show, err := helm(t, "show", "chart", tgzPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(show, "version: "+version.Version) {
			t.Errorf("helm show chart: %s; want version %s", show, version.Version)
		}
		rendered, err := helm(t, "template", "jobset", tgzPath, "--namespace", "jobset-system")
		if err != nil {
			t.Fatal(err)
		}
		desc, err := oci.Image(tars["jobset-agent"])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rendered, "@"+desc.Digest.String()) {
			t.Error("helm template of the chart archive does not pin the agent's image by digest")
		}
	})

	t.Run("chart OCI artifact", func(t *testing.T) {
		dir := filepath.Join(out, "chart")
		idx, err := layout.ImageIndexFromPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		index, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(index.Manifests) != 1 || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != version.Version {
			t.Fatalf("index.json lists %+v, want one manifest tagged %s", index.Manifests, version.Version)
		}
		desc := index.Manifests[0]
		if got := blobDigest(t, dir, desc.Digest.Hex); got != desc.Digest.Hex {
			t.Errorf("the manifest blob hashes to %s, index.json says %s", got, desc.Digest.Hex)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if manifest.Config.MediaType != "application/vnd.cncf.helm.config.v1+json" {
			t.Errorf("config media type %s, want Helm's", manifest.Config.MediaType)
		}
		if got := blobDigest(t, dir, manifest.Config.Digest.Hex); got != manifest.Config.Digest.Hex {
			t.Errorf("the config blob hashes to %s, the manifest says %s", got, manifest.Config.Digest.Hex)
		}
		config := read(t, filepath.Join(dir, "blobs", "sha256", manifest.Config.Digest.Hex))
		if !strings.Contains(config, `"version":"`+version.Version+`"`) || !strings.Contains(config, `"name":"jobset"`) {
			t.Errorf("config %s: want the chart's name and version", config)
		}
		if len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != "application/vnd.cncf.helm.chart.content.v1.tar+gzip" {
			t.Fatalf("layers %+v, want one of Helm's chart content", manifest.Layers)
		}
		sum := sha256.Sum256(tgz)
		if manifest.Layers[0].Digest.Hex != hex.EncodeToString(sum[:]) || manifest.Layers[0].Size != int64(len(tgz)) {
			t.Errorf("the chart layer is %s (%d bytes), the chart archive sha256:%x (%d bytes)", manifest.Layers[0].Digest, manifest.Layers[0].Size, sum, len(tgz))
		}
	})

	t.Run("SBOMs", func(t *testing.T) {
		for name, tarPath := range tars {
			f, err := os.Open(filepath.Join(out, "sbom", name+".spdx.json"))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := spdxjson.Read(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s's SBOM is no SPDX JSON: %v", name, err)
			}
			if doc.SPDXVersion != "SPDX-2.3" || doc.CreationInfo == nil {
				t.Errorf("%s's SBOM: version %q", name, doc.SPDXVersion)
			}
			packages := map[string]bool{}
			for _, p := range doc.Packages {
				packages[p.PackageName+"@"+p.PackageVersion] = true
				for _, c := range p.PackageChecksums {
					packages[p.PackageName+"#"+c.Value] = true
				}
			}
			dir := t.TempDir()
			if err := oci.Extract(tarPath, dir); err != nil {
				t.Fatal(err)
			}
			_, idx, err := oci.Index(dir)
			if err != nil {
				t.Fatal(err)
			}
			images, err := oci.Platforms(idx)
			if err != nil {
				t.Fatal(err)
			}
			for platform, img := range images {
				binaries, err := executables(img)
				if err != nil {
					t.Fatal(err)
				}
				for path, data := range binaries {
					if !packages[fmt.Sprintf("%s#%x", path, sha256.Sum256(data))] {
						t.Errorf("%s's SBOM does not name %s for %s by its checksum", name, path, platform)
					}
					info, err := buildinfo.Read(bytes.NewReader(data))
					if err != nil {
						t.Fatal(err)
					}
					if len(info.Deps) == 0 {
						t.Errorf("%s %s for %s lists no modules", name, path, platform)
					}
					for _, m := range info.Deps {
						if !packages[m.Path+"@"+m.Version] {
							t.Errorf("%s's SBOM does not name module %s %s of %s for %s", name, m.Path, m.Version, path, platform)
						}
					}
				}
			}
		}
		if !strings.Contains(read(t, filepath.Join(out, "sbom", "jobset-controller.spdx.json")), `"k8s.io/client-go"`) {
			t.Error("the controller's SBOM does not name k8s.io/client-go")
		}
	})

	t.Run("the folder holds what images/README.md lists", func(t *testing.T) {
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			got = append(got, name)
		}
		want := []string{"SHA256SUMS", "agent/", "chart/", "install.yaml", "jobset-" + version.Version + ".tgz", "monitoring/", "plugin/", "sbom/"}
		if !slices.Equal(got, want) {
			t.Errorf("the release folder holds %v, want %v", got, want)
		}
	})

	t.Run("kubectl plugin for linux and darwin, amd64 and arm64", func(t *testing.T) {
		var want []string
		for _, platform := range pluginPlatforms {
			name := filepath.ToSlash(pluginFile(platform))
			want = append(want, name)
			info, err := os.Stat(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm()&0o111 == 0 {
				t.Errorf("%s is not executable (%s)", name, info.Mode())
			}
			if got := read(t, filepath.Join(out, name)); got != string(fakeBinary(t, platform)) {
				t.Errorf("%s is not the -plugin binary for %s", name, platform)
			}
		}
		if got := listFiles(t, filepath.Join(out, "plugin")); !slices.Equal(got, []string{
			"kubectl-jobset-darwin-amd64", "kubectl-jobset-darwin-arm64", "kubectl-jobset-linux-amd64", "kubectl-jobset-linux-arm64",
		}) {
			t.Errorf("plugin/ holds %v, want %v", got, want)
		}
	})

	t.Run("SHA256SUMS", func(t *testing.T) {
		listed := map[string]bool{}
		sc := bufio.NewScanner(strings.NewReader(read(t, filepath.Join(out, "SHA256SUMS"))))
		for sc.Scan() {
			sum, path, ok := strings.Cut(sc.Text(), "  ")
			if !ok {
				t.Fatalf("SHA256SUMS line %q: want <sha256>  <path>", sc.Text())
			}
			listed[path] = true
			got := sha256.Sum256([]byte(read(t, filepath.Join(out, filepath.FromSlash(path)))))
			if hex.EncodeToString(got[:]) != sum {
				t.Errorf("%s: SHA256SUMS says %s, the file hashes to %x", path, sum, got)
			}
		}
		for _, f := range listFiles(t, out) {
			if f != "SHA256SUMS" && !listed[f] {
				t.Errorf("SHA256SUMS does not list %s", f)
			}
		}
		if listed["SHA256SUMS"] || len(listed) == 0 {
			t.Errorf("SHA256SUMS lists %v", listed)
		}
	})

	t.Run("refuses a folder that is not empty", func(t *testing.T) {
		output, err := runRelease(t, out)
		if err == nil || !strings.Contains(string(output), "not empty") {
			t.Errorf("a second release into %s: %v, %s; want an error saying it is not empty", out, err, output)
		}
	})
}

// TestReleaseIsReproducible: the same images give the same release.
func TestReleaseIsReproducible(t *testing.T) {
	first, second := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, out := range []string{first, second} {
		if output, err := runRelease(t, out); err != nil {
			t.Fatalf("release: %v\n%s", err, output)
		}
	}
	if a, b := read(t, filepath.Join(first, "SHA256SUMS")), read(t, filepath.Join(second, "SHA256SUMS")); a != b {
		t.Errorf("two releases of the same images differ:\n%s\n%s", a, b)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func blobDigest(t *testing.T, dir, hexDigest string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(read(t, filepath.Join(dir, "blobs", "sha256", hexDigest))))
	return hex.EncodeToString(sum[:])
}

// listFiles lists the files under dir by slash-separated relative path.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// tgzFiles reads a gzipped tar by entry name.
func tgzFiles(t *testing.T, data []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = string(content)
	}
}

// helm runs the Helm tools/helm/build.sh builds, with homes of its own.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		t.Fatal("HELM is not set: run `tools/helm/build.sh` and export HELM=<the path it prints> (tools/test.sh does both)")
	}
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
