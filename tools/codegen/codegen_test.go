package codegen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fastjobset/jobset/tools/testing/framework"
)

const fix = "run tools/update-generated.sh and commit the result"

func TestGeneratedFilesAreFresh(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	objectOut, crdOut := filepath.Join(out, "object"), filepath.Join(out, "crd")

	cmd := exec.Command("bash", "tools/codegen/controller-gen.sh", "./api/jobset/v1alpha2", objectOut, crdOut)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen failed: %v\n%s", err, output)
	}

	compare(t, filepath.Join(objectOut, "zz_generated.deepcopy.go"),
		filepath.Join(root, "api/jobset/v1alpha2/zz_generated.deepcopy.go"))

	generated, err := filepath.Glob(filepath.Join(crdOut, "*.yaml"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("controller-gen wrote no CRD into %s (%v)", crdOut, err)
	}
	for _, g := range generated {
		compare(t, g, filepath.Join(root, "api/crd", filepath.Base(g)))
	}
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
