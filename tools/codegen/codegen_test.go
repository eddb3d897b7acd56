package codegen_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

const fix = "run tools/update-generated.sh and commit the result"

// generatedDirs are the directories tools/codegen/generate.sh writes; every
// file it writes there must be checked in unchanged.
var generatedDirs = []string{
	"api/jobset/v1alpha2",
	"api/crd",
	"controllers/rbac",
	"webhooks/rbac",
	"webhooks/manifests",
	"agent/rbac",
	"monitoring",
	"images",
}

// generatedTrees are directories generate.sh writes whole, subdirectories
// included: the checked-in tree must hold exactly its files (a template
// the renderer no longer writes is stale too).
var generatedTrees = []string{"charts/jobset"}

// TestGeneratedFilesAreFresh regenerates deepcopy, CRD, RBAC, webhook
// configurations and the agent's manifests from the source tree into a
// temporary directory and compares.
func TestGeneratedFilesAreFresh(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "tools/codegen/generate.sh", out)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generating failed: %v\n%s", err, output)
	}
	for _, dir := range generatedDirs {
		generated, err := filepath.Glob(filepath.Join(out, dir, "*"))
		if err != nil || len(generated) == 0 {
			t.Fatalf("nothing was generated into %s (%v)", dir, err)
		}
		for _, g := range generated {
			compare(t, g, filepath.Join(root, dir, filepath.Base(g)))
		}
	}
	for _, dir := range generatedTrees {
		generated, checkedIn := files(t, filepath.Join(out, dir)), files(t, filepath.Join(root, dir))
		if len(generated) == 0 {
			t.Fatalf("nothing was generated into %s", dir)
		}
		for _, f := range generated {
			compare(t, filepath.Join(out, dir, f), filepath.Join(root, dir, f))
		}
		for _, f := range checkedIn {
			if !slices.Contains(generated, f) {
				t.Errorf("%s is no longer generated: %s", filepath.Join(root, dir, f), fix)
			}
		}
	}
}

// files lists the files under dir, by their paths relative to it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, rel)
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func compare(t *testing.T, generatedPath, checkedInPath string) {
	t.Helper()
	want, err := os.ReadFile(generatedPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(checkedInPath)
	if err != nil {
		t.Errorf("%s is missing: %s", checkedInPath, fix)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: %s", checkedInPath, fix)
	}
}
