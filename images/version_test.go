package images_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/internal/oci"
	"github.com/fastjobset/jobset/tools/testing/framework"
	"github.com/fastjobset/jobset/tools/testing/runfiles"
)

// Set by the Bazel target: the install manifests Bazel rendered.
var installs = flag.String("installs", "", "Comma-separated install.yaml files Bazel rendered.")

// shippedImage matches a reference to a shipped image and captures its tag.
var shippedImage = regexp.MustCompile(`ghcr\.io/fastjobset/(jobset-(?:controller|webhook|agent)):([A-Za-z0-9_.-]+)`)

// The images, the manifests that run them and the examples that name the
// agent all carry the release's tag, v<api/version/VERSION>, the version
// the binaries print: a release changes one file.
func TestImagesAreTaggedWithTheRelease(t *testing.T) {
	if *builtFrom == "" {
		t.Skip("checks the images Bazel builds: run `bazel test //images:images_test`")
	}
	for _, image := range strings.Split(*builtFrom, ",") {
		tarPath := runfiles.Path(strings.Split(image, "=")[0])
		desc, err := oci.Image(tarPath)
		if err != nil {
			t.Fatal(err)
		}
		name := desc.Annotations[oci.AnnotationContainerdName]
		if !strings.HasSuffix(name, ":"+version.Tag) {
			t.Errorf("%s is named %s, want the tag %s (api/version/VERSION); build it with build-image's default -tag", filepath.Base(tarPath), name, version.Tag)
		}
	}
}

func TestInstallRunsTheReleasedImages(t *testing.T) {
	if *installs == "" {
		t.Skip("checks the manifests Bazel renders: run `bazel test //images:images_test`")
	}
	for _, install := range strings.Split(*installs, ",") {
		data, err := os.ReadFile(runfiles.Path(install))
		if err != nil {
			t.Fatal(err)
		}
		checkTags(t, filepath.Base(install), string(data), 3)
	}
}

func TestExamplesRunTheReleasedAgent(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples under %s/docs/examples: %v", root, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkTags(t, "docs/examples/"+filepath.Base(f), string(data), 0)
	}
}

// checkTags requires every shipped image text names to carry the release's
// tag, and at least atLeast names.
func checkTags(t *testing.T, file, text string, atLeast int) {
	t.Helper()
	found := shippedImage.FindAllStringSubmatch(text, -1)
	if len(found) < atLeast {
		t.Errorf("%s names %d shipped images, want at least %d", file, len(found), atLeast)
	}
	for _, m := range found {
		if m[2] != version.Tag {
			t.Errorf("%s runs %s, want the tag %s (api/version/VERSION)", file, m[0], version.Tag)
		}
	}
}
