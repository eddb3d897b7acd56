package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/images/internal/oci"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// generateInstall writes install.yaml from the checked-in generated files.
func generateInstall(t *testing.T, img images) []client.Object {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	in := installInputs{
		CRD:            filepath.Join(root, "api/crd/jobset.x-k8s.io_jobsets.yaml"),
		ControllerRBAC: filepath.Join(root, "controllers/rbac/role.yaml"),
		WebhookRBAC:    filepath.Join(root, "webhooks/rbac/role.yaml"),
		WebhookConfigs: filepath.Join(root, "webhooks/manifests/manifests.yaml"),
	}
	var b bytes.Buffer
	if err := writeInstall(&b, in, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "install.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := readObjects(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestInstallIsAcceptedByTheAPIServer applies every object of install.yaml
// to a real apiserver with a server-side dry run: schema, defaults and
// validation as a cluster would run them, nothing stored.
func TestInstallIsAcceptedByTheAPIServer(t *testing.T) {
	env, err := framework.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()

	objs := generateInstall(t, images{
		Controller: "registry.example/team/jobset-controller:v1",
		Webhook:    "registry.example/team/jobset-webhook:v1",
		Agent:      "registry.example/team/jobset-agent:v1@sha256:" + strings.Repeat("a", 64),
	})
	// Namespaced objects are only dry-run in a namespace that exists.
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace}}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, obj := range objs {
		u := &unstructured.Unstructured{}
		u.Object, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		kinds[u.GetKind()]++
		err := env.Client.Patch(ctx, u, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("install-test"))
		if err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), client.ObjectKeyFromObject(u), err)
		}
	}
	for kind, want := range map[string]int{
		"Namespace": 1, "CustomResourceDefinition": 1, "ServiceAccount": 2, "ClusterRole": 2, "Role": 1,
		"ClusterRoleBinding": 2, "RoleBinding": 1, "Service": 1, "Deployment": 2,
		"MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1,
		"ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1,
	} {
		if kinds[kind] != want {
			t.Errorf("install.yaml has %d %s, want %d", kinds[kind], kind, want)
		}
	}
	// Nothing was stored.
	var crd unstructured.Unstructured
	crd.SetAPIVersion("v1")
	crd.SetKind("ServiceAccount")
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: SystemNamespace, Name: ControllerName}, &crd); !apierrors.IsNotFound(err) {
		t.Errorf("the dry run stored the controller's ServiceAccount (%v)", err)
	}
}

// TestInstallWiring checks what ties the pieces together: images, the
// webhook Service, and the names the webhook's flags expect.
func TestInstallWiring(t *testing.T) {
	img := images{Controller: "r/jobset-controller:t", Webhook: "r/jobset-webhook:t", Agent: "r/jobset-agent:t"}
	var text strings.Builder
	for _, obj := range generateInstall(t, img) {
		data, err := marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		text.Write(data)
	}
	for _, want := range []string{
		"image: r/jobset-controller:t",
		"image: r/jobset-webhook:t",
		"--agent-image=r/jobset-agent:t",
		"name: " + MutatingConfigName,
		"name: " + ValidatingConfigName,
		"name: " + WebhookServiceName + "\n      namespace: " + SystemNamespace,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("install.yaml lacks %q", want)
		}
	}
	for _, placeholder := range []string{"name: webhook-service", "namespace: system\n"} {
		if strings.Contains(text.String(), placeholder) {
			t.Errorf("install.yaml keeps controller-gen's placeholder %q", placeholder)
		}
	}
}

func TestImageRefs(t *testing.T) {
	img, err := imageRefs("registry.example/team/", "v2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Agent != "registry.example/team/jobset-agent:v2" || img.Controller != "registry.example/team/jobset-controller:v2" {
		t.Errorf("refs %+v", img)
	}
	if _, err := imageRefs("r", "t", []string{"/nonexistent.tar"}); err == nil {
		t.Error("pinning to a missing image tar: no error")
	}

	// Pinned: each reference carries the digest of the image built for it.
	var tars []string
	digests := map[string]string{}
	for _, name := range []string{"jobset-controller", "jobset-webhook", "jobset-agent"} {
		path := filepath.Join(t.TempDir(), name+".tar")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		digests[name], err = oci.Write(f, oci.Spec{Reference: "ghcr.io/fastjobset/" + name + ":dev", Files: []oci.File{{Path: "/" + name, Data: []byte(name)}}})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		tars = append(tars, path)
	}
	img, err = imageRefs("r", "t", tars)
	if err != nil {
		t.Fatal(err)
	}
	if want := "r/jobset-agent:t@" + digests["jobset-agent"]; img.Agent != want {
		t.Errorf("pinned agent = %s, want %s", img.Agent, want)
	}
	if _, err := imageRefs("r", "t", tars[:2]); err == nil {
		t.Error("pinning two of three images: no error")
	}
}
