package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/api/version"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// foreignCRDs stands in for the CRDs of the Prometheus Operator and
// cert-manager, which the chart's optional objects need: they take any
// spec, so the dry run checks the objects' metadata, not their schema.
func foreignCRDs(t *testing.T, c client.Client) {
	t.Helper()
	for _, crd := range []struct{ group, kind, plural string }{
		{"monitoring.coreos.com", "ServiceMonitor", "servicemonitors"},
		{"monitoring.coreos.com", "PrometheusRule", "prometheusrules"},
		{"cert-manager.io", "Certificate", "certificates"},
		{"cert-manager.io", "Issuer", "issuers"},
	} {
		obj := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: crd.plural + "." + crd.group},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: crd.group, Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: crd.kind, Plural: crd.plural},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true),
					}},
				}},
			},
		}
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	// The API server serves a new CRD's resource a moment after it
	// accepted it.
	for _, plural := range []string{"servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com", "certificates.cert-manager.io", "issuers.cert-manager.io"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		for established := false; !established; {
			if err := c.Get(context.Background(), client.ObjectKey{Name: plural}, crd); err != nil {
				t.Fatal(err)
			}
			for _, cond := range crd.Status.Conditions {
				established = established || cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue
			}
		}
	}
}

// The chart, with its default values and with every optional object on,
// is accepted by a real API server: a server-side dry run of each object
// it renders (schema, defaults, validation, admission policies' own
// checks), nothing stored.
func TestChartIsAcceptedByTheAPIServer(t *testing.T) {
	env, err := framework.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	foreignCRDs(t, env.Client)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace}}); err != nil {
		t.Fatal(err)
	}
	chart := testChart(t)
	for name, args := range map[string][]string{
		"defaults":           nil,
		"non-default values": {"-f", valuesFile(t, nonDefaultValues)},
	} {
		objs := helmTemplate(t, chart, args...)
		if len(objs) < 20 {
			t.Fatalf("%s: the chart renders %d objects", name, len(objs))
		}
		for _, u := range objs {
			err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.DryRunAll, client.ForceOwnership, client.FieldOwner("chart-test"))
			if err != nil {
				t.Errorf("%s: %s: %v", name, objectKey(u), err)
			}
		}
	}
}

// Helm installs the chart over an install.yaml installation (taking its
// objects over), upgrades it with new values, and uninstalls it, on a
// real API server, leaving the CRD and its JobSets in place.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	env, err := framework.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	kubeconfig, err := env.Kubeconfig("helm-test", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	helm := func(args ...string) {
		t.Helper()
		if out, err := helmCmd(t, append(args, "--kubeconfig", kc)...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}

	// An install.yaml installation, as `kubectl apply --server-side` leaves it.
	for _, obj := range generateInstall(t, images{
		Controller: "ghcr.io/fastjobset/jobset-controller:" + version.Tag,
		Webhook:    "ghcr.io/fastjobset/jobset-webhook:" + version.Tag,
		Agent:      "ghcr.io/fastjobset/jobset-agent:" + version.Tag,
	}) {
		u := obj.(*unstructured.Unstructured)
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.ForceOwnership, client.FieldOwner("kubectl")); err != nil {
			t.Fatalf("%s: %v", objectKey(u), err)
		}
	}
	chart := testChart(t)
	// --force-conflicts: the fields kubectl applied become Helm's.
	helm("install", "jobset", chart, "--namespace", SystemNamespace, "--take-ownership", "--force-conflicts")
	replicas := func() int32 {
		t.Helper()
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: SystemNamespace, Name: ControllerName}, d); err != nil {
			t.Fatal(err)
		}
		if d.Labels["app.kubernetes.io/managed-by"] != "Helm" {
			t.Errorf("the controller's Deployment is not Helm's: labels %v", d.Labels)
		}
		return *d.Spec.Replicas
	}
	if got := replicas(); got != 2 {
		t.Errorf("installed: %d replicas, want 2", got)
	}

	// kubectl keeps the fields it applied, beside Helm: a change to one of
	// them conflicts until forced once.
	helm("upgrade", "jobset", chart, "--namespace", SystemNamespace, "--set", "controller.replicas=3", "--force-conflicts")
	if got := replicas(); got != 3 {
		t.Errorf("upgraded: %d replicas, want 3", got)
	}
	uninstall := func() {
		t.Helper()
		helm("uninstall", "jobset", "--namespace", SystemNamespace)
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: SystemNamespace, Name: ControllerName}, &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("uninstalled, the controller's Deployment is still there (%v)", err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "jobsets.jobset.x-k8s.io"}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
			t.Errorf("uninstalling removed the JobSet CRD (and every JobSet): %v", err)
		}
	}
	uninstall()

	// Installed afresh (the CRD it kept is the release's again), Helm
	// alone owns what it applies.
	helm("install", "jobset", chart, "--namespace", SystemNamespace)
	if got := replicas(); got != 2 {
		t.Errorf("reinstalled: %d replicas, want 2", got)
	}
	helm("upgrade", "jobset", chart, "--namespace", SystemNamespace, "--set", "controller.replicas=1")
	if got := replicas(); got != 1 {
		t.Errorf("upgraded: %d replicas, want 1", got)
	}
	uninstall()
}
