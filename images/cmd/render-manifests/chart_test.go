package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// helmEnv names the Helm binary the chart's tests run: tools/helm/build.sh
// builds it and prints its path.
const helmEnv = "HELM"

// helmCmd runs Helm with homes of its own (Bazel's HOME is read-only).
func helmCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv(helmEnv)
	if bin == "" {
		t.Fatalf("%s is not set: run `tools/helm/build.sh` and export %s=<the path it prints> (tools/test.sh does both)", helmEnv, helmEnv)
	}
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), &helmError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

type helmError struct {
	args   []string
	err    error
	stderr string
}

func (e *helmError) Error() string {
	return "helm " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.stderr
}

func testInputs(t *testing.T) installInputs {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return installInputs{
		CRD:            filepath.Join(root, "api/crd/jobset.x-k8s.io_jobsets.yaml"),
		ControllerRBAC: filepath.Join(root, "controllers/rbac/role.yaml"),
		WebhookRBAC:    filepath.Join(root, "webhooks/rbac/role.yaml"),
		WebhookConfigs: filepath.Join(root, "webhooks/manifests/manifests.yaml"),
	}
}

// testChart renders the chart as tools/codegen/generate.sh does, into a
// temporary directory.
func testChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ChartName)
	if err := writeChart(dir, testInputs(t), chartInputs{registry: "ghcr.io/fastjobset", tag: version.Tag}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// helmTemplate renders the chart into jobset-system with the arguments
// given (--set, -f) and reads the objects.
func helmTemplate(t *testing.T, chart string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helmCmd(t, append([]string{"template", "jobset", chart, "--namespace", SystemNamespace}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + client.ObjectKeyFromObject(u).String()
}

// helmLabelKeys are the labels the chart adds to every object's own
// labels, which install.yaml does not carry: Helm's conventions, by which
// `kubectl get -l app.kubernetes.io/instance=<release>` finds the release.
var helmLabelKeys = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"}

// withoutHelmMarks removes from a rendered object what the chart adds on
// purpose: Helm's labels and, on the CRD, the annotation that keeps it (and
// every JobSet) when the release is uninstalled.
func withoutHelmMarks(u *unstructured.Unstructured) {
	labels := u.GetLabels()
	for _, k := range helmLabelKeys {
		delete(labels, k)
	}
	u.SetLabels(labels)
	if len(labels) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "labels")
	}
	if u.GetKind() == "CustomResourceDefinition" {
		annotations := u.GetAnnotations()
		delete(annotations, "helm.sh/resource-policy")
		u.SetAnnotations(annotations)
		if len(annotations) == 0 {
			unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		}
	}
}

// The chart with its default values is install.yaml, object by object,
// but for the differences Helm needs: no Namespace (Helm installs into
// one: --namespace jobset-system --create-namespace), Helm's labels on
// every object, and the CRD kept on uninstall.
func TestChartDefaultsAreInstallYAML(t *testing.T) {
	chart := testChart(t)
	if out, err := helmCmd(t, "lint", "--strict", chart); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	install := map[string]*unstructured.Unstructured{}
	for _, obj := range generateInstall(t, images{
		Controller: "ghcr.io/fastjobset/jobset-controller:" + version.Tag,
		Webhook:    "ghcr.io/fastjobset/jobset-webhook:" + version.Tag,
		Agent:      "ghcr.io/fastjobset/jobset-agent:" + version.Tag,
	}) {
		u := obj.(*unstructured.Unstructured)
		if u.GetKind() == "Namespace" {
			continue
		}
		install[objectKey(u)] = u
	}
	rendered := map[string]*unstructured.Unstructured{}
	for _, u := range helmTemplate(t, chart) {
		for _, k := range helmLabelKeys {
			if _, ok := u.GetLabels()[k]; !ok {
				t.Errorf("%s: no label %s", objectKey(u), k)
			}
		}
		withoutHelmMarks(u)
		rendered[objectKey(u)] = u
	}
	for key, want := range install {
		got, ok := rendered[key]
		if !ok {
			t.Errorf("install.yaml's %s is not in the chart", key)
			continue
		}
		if diff := cmp.Diff(want.Object, got.Object); diff != "" {
			t.Errorf("%s: the chart renders (+) what install.yaml does not (-):\n%s", key, diff)
		}
	}
	for key := range rendered {
		if install[key] == nil {
			t.Errorf("the chart's defaults render %s, which install.yaml does not hold", key)
		}
	}
}

// asTyped converts a rendered object into obj.
func asTyped(t *testing.T, u *unstructured.Unstructured, obj any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		t.Fatalf("%s: %v", objectKey(u), err)
	}
}
