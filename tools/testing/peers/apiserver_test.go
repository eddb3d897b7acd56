package peers

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// The tests below run against envtest's real apiserver, started once, for
// the first test that asks (the others need none).
var (
	apiserverOnce sync.Once
	apiserverEnv  *framework.Environment
	apiserverErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if apiserverEnv != nil {
		_ = apiserverEnv.Stop()
	}
	os.Exit(code)
}

func apiserver(t *testing.T) (Cluster, *bytes.Buffer) {
	t.Helper()
	apiserverOnce.Do(func() { apiserverEnv, apiserverErr = framework.Start() })
	if apiserverErr != nil {
		t.Fatal(apiserverErr)
	}
	cs, err := kubernetes.NewForConfig(apiserverEnv.Config)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	return Cluster{Client: apiserverEnv.Client, Clientset: cs, Out: &out, NoNodes: true}, &out
}

// timeout bounds each step of the tests below; a step that passes takes
// far less.
const timeout = 30 * time.Second

// playControllers plays, until the test ends, what envtest has not and a
// peer's install and removal wait for: kube-controller-manager rolling a
// Deployment out and finalizing a namespace being deleted.
func playControllers(t *testing.T, cl Cluster) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			var deployments appsv1.DeploymentList
			if err := cl.Client.List(ctx, &deployments); err != nil {
				return
			}
			for i := range deployments.Items {
				if d := &deployments.Items[i]; d.Status.ObservedGeneration != d.Generation {
					_ = rollOut(ctx, cl.Client, d)
				}
			}
			var namespaces corev1.NamespaceList
			if err := cl.Client.List(ctx, &namespaces); err != nil {
				return
			}
			for i := range namespaces.Items {
				if ns := &namespaces.Items[i]; ns.DeletionTimestamp != nil && len(ns.Spec.Finalizers) > 0 {
					ns.Spec.Finalizers = nil
					_, _ = cl.Clientset.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
				}
			}
		}, 50*time.Millisecond)
	}()
}

// rollOut writes the status of a Deployment whose current template runs
// everywhere, as the Deployment controller would.
func rollOut(ctx context.Context, c client.Client, d *appsv1.Deployment) error {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
	}
	return c.Status().Update(ctx, d)
}

// fake is a peer of the shape of the real ones: a namespace, a
// CustomResourceDefinition whose objects its webhook would admit, a
// Configuration, a manager, a webhook configuration.
var fake = &Peer{
	Name:          "fake",
	Namespace:     "fake-system",
	Deployments:   []string{"fake-manager"},
	rollout:       timeout,
	probe:         fakeProbe,
	probeAttempts: 60,
	probeInterval: 500 * time.Millisecond,
	config:        &configFile{ConfigMap: "fake-config", Key: "config.yaml"},
}

func fakeProbe() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "fake.example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "probe"},
	}}
}

const fakeManifests = `apiVersion: v1
kind: Namespace
metadata:
  name: fake-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.fake.example.com
spec:
  group: fake.example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: fake-manager
  namespace: fake-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: fake-config
  namespace: fake-system
data:
  config.yaml: |
    kind: Configuration
    health:
      port: 8081
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: fake-manager
  namespace: fake-system
spec:
  selector:
    matchLabels: {app: fake}
  template:
    metadata:
      labels: {app: fake}
    spec:
      serviceAccountName: fake-manager
      containers:
      - name: manager
        image: localhost/fake/manager:v1
        imagePullPolicy: IfNotPresent
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: fake-webhook
webhooks:
- name: gadgets.fake.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig:
    service: {namespace: fake-system, name: fake-webhook, path: /validate}
  rules:
  - apiGroups: [fake.example.com]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [gadgets]
`

// get reads obj's current state into a new object of its kind, or returns
// the error (NotFound when it is gone).
func get(ctx context.Context, c client.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(obj.GroupVersionKind())
	return current, c.Get(ctx, client.ObjectKeyFromObject(obj), current)
}

// TestInstallWaitsUntilThePeerServes: Install applies every object and
// returns only once the manager has rolled out; the manifests stay as they
// were, for Uninstall and another Install.
func TestInstallWaitsUntilThePeerServes(t *testing.T) {
	cl, out := apiserver(t)
	ctx := context.Background()
	impatient := *fake
	impatient.rollout = 2 * time.Second
	m := &Manifests{Peer: &impatient, Objects: decode(t, fakeManifests)}
	before := decode(t, fakeManifests)

	// Nothing rolls the manager out.
	err := m.Install(ctx, cl)
	if want := "deployment fake-system/fake-manager did not roll out within 2s"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Install of a manager that does not roll out: %v, want an error with %q", err, want)
	}
	var d appsv1.Deployment
	if err := cl.Client.Get(ctx, client.ObjectKey{Namespace: "fake-system", Name: "fake-manager"}, &d); err != nil {
		t.Fatal(err)
	}
	if err := rollOut(ctx, cl.Client, &d); err != nil {
		t.Fatal(err)
	}
	if err := m.Install(ctx, cl); err != nil {
		t.Fatalf("Install of a manager that rolled out: %v\n%s", err, out)
	}

	for _, obj := range m.Objects {
		current, err := get(ctx, cl.Client, obj)
		if err != nil {
			t.Errorf("%s %s: %v", obj.GetKind(), ref(obj), err)
		}
		if obj.GetKind() == "CustomResourceDefinition" && !established(current) {
			t.Errorf("CustomResourceDefinition %s is not established", obj.GetName())
		}
	}
	if diff := cmp.Diff(before, m.Objects); diff != "" {
		t.Errorf("Install changed the manifests (-before +after):\n%s", diff)
	}
	playControllers(t, cl)
	uctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := m.Uninstall(uctx, cl); err != nil {
		t.Fatalf("Uninstall: %v", err)
	}
}

// TestUninstallLeavesTheCustomResourceDefinitions: everything else of the
// peer is gone when Uninstall returns, and the peer installs again.
func TestUninstallLeavesTheCustomResourceDefinitions(t *testing.T) {
	cl, out := apiserver(t)
	playControllers(t, cl)
	ctx := context.Background()
	m := &Manifests{Peer: fake, Objects: decode(t, fakeManifests)}
	if err := m.Install(ctx, cl); err != nil {
		t.Fatalf("Install: %v\n%s", err, out)
	}
	widget := fakeProbe()
	widget.SetName("kept")
	if err := cl.Client.Create(ctx, widget); err != nil {
		t.Fatal(err)
	}

	uctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := m.Uninstall(uctx, cl); err != nil {
		t.Fatalf("Uninstall: %v", err)
	}
	for _, obj := range append(m.Objects, widget) {
		_, err := get(ctx, cl.Client, obj)
		switch kept := obj.GetKind() == "CustomResourceDefinition" || obj.GetKind() == "Widget"; {
		case kept && err != nil:
			t.Errorf("%s %s is gone: %v", obj.GetKind(), ref(obj), err)
		case !kept && !apierrors.IsNotFound(err):
			t.Errorf("%s %s is left (%v)", obj.GetKind(), ref(obj), err)
		}
	}
	if err := m.Install(ctx, cl); err != nil {
		t.Fatalf("Install after Uninstall: %v\n%s", err, out)
	}
	if err := m.Uninstall(uctx, cl); err != nil {
		t.Fatalf("Uninstall: %v", err)
	}
}

// TestConfigure: the Configuration gains the fields, keeps its own, and
// the manager restarts to read it; a field it sets is refused.
func TestConfigure(t *testing.T) {
	cl, out := apiserver(t)
	playControllers(t, cl)
	ctx := context.Background()
	m := &Manifests{Peer: fake, Objects: decode(t, fakeManifests)}
	if err := m.Install(ctx, cl); err != nil {
		t.Fatalf("Install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := m.Uninstall(ctx, cl); err != nil {
			t.Errorf("Uninstall: %v", err)
		}
	})
	key := client.ObjectKey{Namespace: "fake-system", Name: "fake-manager"}
	var before appsv1.Deployment
	if err := cl.Client.Get(ctx, key, &before); err != nil {
		t.Fatal(err)
	}

	if err := fake.Configure(ctx, cl, []byte("waitForPodsReady:\n  timeout: 5m\n")); err != nil {
		t.Fatalf("Configure: %v\n%s", err, out)
	}
	var cm corev1.ConfigMap
	if err := cl.Client.Get(ctx, client.ObjectKey{Namespace: "fake-system", Name: "fake-config"}, &cm); err != nil {
		t.Fatal(err)
	}
	want := "kind: Configuration\nhealth:\n  port: 8081\nwaitForPodsReady:\n  timeout: 5m\n"
	if diff := cmp.Diff(want, cm.Data["config.yaml"]); diff != "" {
		t.Errorf("Configuration (-want +got):\n%s", diff)
	}
	var after appsv1.Deployment
	if err := cl.Client.Get(ctx, key, &after); err != nil {
		t.Fatal(err)
	}
	if after.Generation == before.Generation || after.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Errorf("the manager was not restarted: generation %d to %d, template annotations %v", before.Generation, after.Generation, after.Spec.Template.Annotations)
	}

	err := fake.Configure(ctx, cl, []byte("health:\n  port: 9000\n"))
	if err == nil || !strings.Contains(err.Error(), "sets health already") {
		t.Errorf("Configure of a field the Configuration sets: %v, want it refused", err)
	}
}

// TestWaitServingGivesUp: a manager that does not roll out, or a webhook
// that does not admit its probe, ends the wait with an error that says
// which, and what the peer's Pods say goes to Out.
func TestWaitServingGivesUp(t *testing.T) {
	cl, out := apiserver(t)
	ctx := context.Background()
	ns, err := framework.CreateNamespace(ctx, cl.Client, "peer")
	if err != nil {
		t.Fatal(err)
	}

	stuck := *fake
	stuck.Namespace = ns
	stuck.rollout = time.Second
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fake-manager"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "fake"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "fake"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "localhost/fake/manager:v1"}}},
			},
		},
	}
	if err := cl.Client.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	err = stuck.WaitServing(ctx, cl)
	if err == nil || !strings.Contains(err.Error(), "did not roll out within 1s (waiting for the Deployment's spec update to be observed)") {
		t.Errorf("WaitServing of a manager that does not roll out: %v", err)
	}
	if !strings.Contains(out.String(), "--- events in "+ns) {
		t.Errorf("nothing of the peer's namespace went to Out:\n%s", out)
	}

	refused := *fake
	refused.Deployments = nil
	refused.probeAttempts, refused.probeInterval = 3, 10*time.Millisecond
	refused.probe = func() *unstructured.Unstructured {
		u := fakeProbe()
		u.SetKind("Nothing")
		return u
	}
	err = refused.WaitServing(ctx, cl)
	if err == nil || !strings.Contains(err.Error(), "did not admit Nothing probe in 3 attempts 10ms apart") {
		t.Errorf("WaitServing of a webhook that does not admit: %v", err)
	}
}

// TestSwitchJobSet: ours replaced by community JobSet and back, on
// manifests of the real ones' shape: the leaving side's objects and the
// webhook's certificate go, the namespace and every JobSet stay, and the
// CustomResourceDefinition is the arriving side's, whole.
func TestSwitchJobSet(t *testing.T) {
	cl, out := apiserver(t)
	playControllers(t, cl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()

	jobSets := ourCRD(t)
	crd := func(annotation string) *unstructured.Unstructured {
		c := jobSets.DeepCopy()
		c.SetAnnotations(map[string]string{annotation: "true"})
		return c
	}
	namespace := func(label string) *unstructured.Unstructured {
		return decode(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: jobset-system\n  labels: {"+label+": \"true\"}\n")[0]
	}
	ours := &Manifests{Peer: OurJobSet, Objects: append([]*unstructured.Unstructured{namespace("ours"), crd("ours")},
		decode(t, jobSetSide("jobset-controller", "jobset-webhook"))...)}
	community := &Manifests{Peer: CommunityJobSet, Objects: append([]*unstructured.Unstructured{namespace("community"), crd("community")},
		decode(t, jobSetSide("jobset-controller-manager"))...)}
	if err := ours.Install(ctx, cl); err != nil {
		t.Fatalf("installing ours: %v\n%s", err, out)
	}
	cert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: jobSetNamespace, Name: jobSetWebhookCert}}
	if err := cl.Client.Create(ctx, cert); err != nil {
		t.Fatal(err)
	}
	kept := jobSetProbe()
	kept.SetName("kept")
	if err := cl.Client.Create(ctx, kept); err != nil {
		t.Fatal(err)
	}

	expect := func(step string, arriving, leaving *Manifests, certGone bool) {
		t.Helper()
		for _, obj := range without(leaving.Objects, "CustomResourceDefinition", "Namespace") {
			if _, err := get(ctx, cl.Client, obj); !apierrors.IsNotFound(err) {
				t.Errorf("%s: %s's %s %s is left (%v)", step, leaving.Peer.Name, obj.GetKind(), ref(obj), err)
			}
		}
		for _, obj := range without(arriving.Objects, "CustomResourceDefinition", "Namespace") {
			if _, err := get(ctx, cl.Client, obj); err != nil {
				t.Errorf("%s: %s's %s %s: %v", step, arriving.Peer.Name, obj.GetKind(), ref(obj), err)
			}
		}
		current, err := get(ctx, cl.Client, jobSets)
		if err != nil {
			t.Fatal(err)
		}
		if want := only(arriving.Objects, "CustomResourceDefinition")[0].GetAnnotations(); !cmp.Equal(want, current.GetAnnotations()) {
			t.Errorf("%s: the CustomResourceDefinition's annotations are %v, want %s's alone: %v", step, current.GetAnnotations(), arriving.Peer.Name, want)
		}
		ns, err := get(ctx, cl.Client, namespace("any"))
		if err != nil {
			t.Errorf("%s: the namespace is gone: %v", step, err)
		} else if ns.GetLabels()["ours"] != "true" || ns.GetLabels()["community"] != "" {
			t.Errorf("%s: the namespace's labels are %v, want ours as installed", step, ns.GetLabels())
		}
		if _, err := get(ctx, cl.Client, kept); err != nil {
			t.Errorf("%s: the JobSet is gone: %v", step, err)
		}
		var secret corev1.Secret
		if err := cl.Client.Get(ctx, client.ObjectKeyFromObject(cert), &secret); apierrors.IsNotFound(err) != certGone {
			t.Errorf("%s: the webhook's certificate Secret: %v, want it gone: %t", step, err, certGone)
		}
	}

	if err := SwitchJobSet(ctx, cl, ours, community); err != nil {
		t.Fatalf("to community JobSet: %v\n%s", err, out)
	}
	expect("to community JobSet", community, ours, true)

	// Switching to the side that runs removes nothing: its certificate stays.
	if err := cl.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: jobSetNamespace, Name: jobSetWebhookCert}}); err != nil {
		t.Fatal(err)
	}
	if err := SwitchJobSet(ctx, cl, ours, community); err != nil {
		t.Fatalf("to community JobSet again: %v\n%s", err, out)
	}
	expect("to community JobSet again", community, ours, false)

	if err := SwitchJobSet(ctx, cl, community, ours); err != nil {
		t.Fatalf("back to ours: %v\n%s", err, out)
	}
	expect("back to ours", ours, community, true)
}

// ourCRD is our JobSet CustomResourceDefinition.
func ourCRD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	crds, err := manifest.Read(filepath.Join(root, "api", "crd", "jobset.x-k8s.io_jobsets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return crds[0]
}

// jobSetSide is the ServiceAccount and Deployments of one side's
// controller, in jobset-system.
func jobSetSide(deployments ...string) string {
	var b strings.Builder
	for _, name := range deployments {
		b.WriteString(strings.NewReplacer("NAME", name).Replace(`---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: NAME
  namespace: jobset-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
  namespace: jobset-system
spec:
  selector:
    matchLabels: {app: NAME}
  template:
    metadata:
      labels: {app: NAME}
    spec:
      serviceAccountName: NAME
      containers:
      - name: manager
        image: localhost/NAME:v1
`))
	}
	return b.String()
}
