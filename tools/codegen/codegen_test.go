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

// TestGeneratedFilesAreFresh regenerates deepcopy, CRD, RBAC and webhook
// configurations from the
// source tree into a temporary directory and compares.
func TestGeneratedFilesAreFresh(t *testing.T) {
	root, err := framework.SourceRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	objectOut, crdOut, rbacOut, webhookOut := filepath.Join(out, "object"), filepath.Join(out, "crd"), filepath.Join(out, "rbac"), filepath.Join(out, "webhook")

	cmd := exec.Command("bash", "tools/codegen/controller-gen.sh", objectOut, crdOut, rbacOut, webhookOut)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen failed: %v\n%s", err, output)
	}

	compare(t, filepath.Join(objectOut, "zz_generated.deepcopy.go"),
		filepath.Join(root, "api/jobset/v1alpha2/zz_generated.deepcopy.go"))
	for dir, checkedIn := range map[string]string{crdOut: "api/crd", rbacOut: "controllers/rbac", webhookOut: "webhooks/manifests"} {
		generated, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(generated) == 0 {
			t.Fatalf("controller-gen wrote nothing into %s (%v)", dir, err)
		}
		for _, g := range generated {
			compare(t, g, filepath.Join(root, checkedIn, filepath.Base(g)))
		}
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
