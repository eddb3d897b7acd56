package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/version"
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
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.DryRunAll, client.ForceOwnership, client.FieldOwner("install-test"))
		if err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), client.ObjectKeyFromObject(u), err)
		}
	}
	for kind, want := range map[string]int{
		"Namespace": 1, "CustomResourceDefinition": 1, "ServiceAccount": 2, "ClusterRole": 3, "Role": 3,
		"ClusterRoleBinding": 2, "RoleBinding": 3, "Service": 3, "Deployment": 2, "PodDisruptionBudget": 2,
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
	digests := map[string]v1.Hash{}
	for _, name := range []string{"jobset-controller", "jobset-webhook", "jobset-agent"} {
		path := filepath.Join(t.TempDir(), name+".tar")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		digests[name], err = oci.Write(f, oci.Spec{Reference: "ghcr.io/fastjobset/" + name + ":dev", Variants: []oci.Variant{
			{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Files: []oci.File{{Path: "/" + name, Data: []byte(name)}}},
			{Platform: v1.Platform{OS: "linux", Architecture: "arm64"}, Files: []oci.File{{Path: "/" + name, Data: []byte("arm64 " + name)}}},
		}})
		if err := errors.Join(err, f.Close()); err != nil {
			t.Fatal(err)
		}
		tars = append(tars, path)
	}
	img, err = imageRefs("r", "t", tars)
	if err != nil {
		t.Fatal(err)
	}
	if want := "r/jobset-agent:t@" + digests["jobset-agent"].String(); img.Agent != want {
		t.Errorf("pinned agent = %s, want %s", img.Agent, want)
	}
	if _, err := imageRefs("r", "t", tars[:2]); err == nil {
		t.Error("pinning two of three images: no error")
	}
}

// TestInstallIsHighlyAvailable checks what lets the controller and the
// webhook ride out a lost Pod, a drain and a rolling update: two replicas
// of each, spread, none taken down before its successor is ready, a
// disruption budget each, a webhook that drains before it stops, and a
// controller lease with which a standby takes over a crashed leader within
// 5 s.
func TestInstallIsHighlyAvailable(t *testing.T) {
	objs := generateInstall(t, images{Controller: "c", Webhook: "w", Agent: "a"})
	deployments := map[string]*appsv1.Deployment{}
	budgets := map[string]*policyv1.PodDisruptionBudget{}
	for _, obj := range objs {
		u := obj.(*unstructured.Unstructured)
		switch u.GetKind() {
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
				t.Fatal(err)
			}
			deployments[d.Name] = d
		case "PodDisruptionBudget":
			b := &policyv1.PodDisruptionBudget{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b); err != nil {
				t.Fatal(err)
			}
			budgets[b.Name] = b
		}
	}
	for _, name := range []string{ControllerName, WebhookName} {
		d := deployments[name]
		if d == nil {
			t.Fatalf("no Deployment %s", name)
		}
		if got := ptr.Deref(d.Spec.Replicas, 1); got != 2 {
			t.Errorf("%s: %d replicas, want 2", name, got)
		}
		if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
			t.Errorf("%s: a rolling update may take a Pod away before its successor is ready (%+v)", name, d.Spec.Strategy)
		}
		hosts := false
		for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
			hosts = hosts || c.TopologyKey == corev1.LabelHostname
		}
		if !hosts {
			t.Errorf("%s: its Pods are not spread over nodes", name)
		}
		b := budgets[name]
		if b == nil {
			t.Errorf("%s: no PodDisruptionBudget", name)
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("%s: the PodDisruptionBudget's selector %v does not select its Pods (%v)", name, b.Spec.Selector, err)
		}
		if b.Spec.MinAvailable == nil || b.Spec.MinAvailable.IntValue() != 1 {
			t.Errorf("%s: PodDisruptionBudget minAvailable %v, want 1", name, b.Spec.MinAvailable)
		}
	}

	if d := deployments[WebhookName]; d != nil {
		c := d.Spec.Template.Spec.Containers[0]
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds < 1 {
			t.Errorf("the webhook stops serving at once when told to stop, while the API server still calls it")
		}
	}
	if d := deployments[ControllerName]; d != nil {
		flags := map[string]string{}
		for _, a := range d.Spec.Template.Spec.Containers[0].Args {
			k, v, _ := strings.Cut(a, "=")
			flags[k] = v
		}
		if _, ok := flags["--leader-elect"]; !ok {
			t.Fatalf("the controller does not elect a leader: %v", flags)
		}
		lease, err1 := time.ParseDuration(flags["--leader-elect-lease-duration"])
		renew, err2 := time.ParseDuration(flags["--leader-elect-renew-deadline"])
		retry, err3 := time.ParseDuration(flags["--leader-elect-retry-period"])
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf("the controller's lease flags: %v", err)
		}
		// A standby sees the last renewal up to one jittered retry (2.2 x)
		// late, and takes the lease at its first retry after it expired.
		if worst := lease + time.Duration(2*2.2*float64(retry)); worst > 5*time.Second {
			t.Errorf("a crashed leader is replaced up to %s after the crash, want at most 5 s (lease %s, retry %s)", worst, lease, retry)
		}
		if lease-renew < 500*time.Millisecond || float64(renew) <= 1.2*float64(retry) {
			t.Errorf("unsafe lease: duration %s, renew deadline %s, retry %s", lease, renew, retry)
		}
	}
}

// TestInstallHeaderLinksTheDocs: install.yaml's header, read by whoever
// applies a release, names the release's files and the docs URL, not
// paths of the repository.
func TestInstallHeaderLinksTheDocs(t *testing.T) {
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
	if err := writeInstall(&b, in, images{}); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(b.String(), "---\n")
	if strings.Contains(header, "agent/rbac/") {
		t.Errorf("install.yaml's header names the repository path agent/rbac/:\n%s", header)
	}
	if want := version.Docs("user-guide.md#rbac-and-the-admission-policy"); !strings.Contains(header, want) {
		t.Errorf("install.yaml's header does not link %s:\n%s", want, header)
	}
}

// The controller's memory limit follows the documented rule: a base plus a
// share per Pod, rounded up to 64 MiB, for the Pods it is sized for.
func TestControllerMemoryLimit(t *testing.T) {
	cases := map[string]struct {
		pods int
		want string
	}{
		"no Pods: the base":            {0, "64Mi"},
		"one Pod rounds up to 64 MiB":  {1, "128Mi"},
		"1000 Pods":                    {1000, "192Mi"},
		"the shipped size, 10000 Pods": {10000, "1088Mi"},
		"a larger fleet, 50000 Pods":   {50000, "4992Mi"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := controllerMemoryLimit(tc.pods); got.String() != tc.want {
				t.Errorf("controllerMemoryLimit(%d) = %s, want %s", tc.pods, got.String(), tc.want)
			}
		})
	}
	d := controllerDeployment(images{Controller: "c"})
	want := controllerMemoryLimit(ControllerSizedForPods)
	if got := d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; got.Cmp(want) != 0 {
		t.Errorf("the controller's Deployment limits its memory to %s, want %s (%d Pods)", got.String(), want.String(), ControllerSizedForPods)
	}
}
