package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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

// nonDefaultValues sets every kind of value the chart takes to something
// install.yaml does not have.
var nonDefaultValues = `
image:
  registry: registry.example/team
  tag: v9.9.9
  pullPolicy: Always
imagePullSecrets: [{name: regcred}]
controller:
  image: {digest: "sha256:` + digestA + `"}
  replicas: 3
  resources: {requests: {cpu: 250m, memory: 256Mi}, limits: {memory: 2Gi}}
  nodeSelector: {node-role.kubernetes.io/control-plane: ""}
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [system]}]}]}}}
  tolerations: [{key: dedicated, operator: Equal, value: system, effect: NoSchedule}]
  topologySpreadConstraints: []
  priorityClassName: system-cluster-critical
  leaderElection: {leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s, namespace: elsewhere}
  kubeAPI: {qps: 1000.5, burst: 2000000}
  concurrency: 20
  nodeLossThreshold: 2m
  repeatedFailureLimit: 0
  logLevel: "2"
  extraArgs: ["--zap-devel=true"]
webhook:
  image: {repository: mirror.example/jobset-webhook}
  replicas: 1
  priorityClassName: system-cluster-critical
  certificate: {validity: 720h, extraDNSNames: "webhook.example"}
agent:
  image: {digest: "sha256:` + digestB + `"}
  cpu: 200m
  memory: 64Mi
  restartExitCode: 99
  fenceNodeLease: false
featureGates: RestartJob=true
tls: {minVersion: VersionTLS13}
certManager: {enabled: true}
metrics:
  serviceMonitor: {enabled: true, labels: {release: prometheus}}
  prometheusRule: {enabled: true, labels: {role: alert-rules}}
  grafanaDashboard: {enabled: true}
flowControl:
  agents: {nominalConcurrencyShares: 200, queueLengthLimit: 50000}
`

var (
	digestA = strings.Repeat("a", 64)
	digestB = strings.Repeat("b", 64)
)

func valuesFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Each value lands where it should: checked on the rendered objects, as
// the API server would read them.
func TestChartValuesLand(t *testing.T) {
	chart := testChart(t)
	values := valuesFile(t, nonDefaultValues)
	if out, err := helmCmd(t, "lint", "--strict", chart, "-f", values); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	objs := map[string]*unstructured.Unstructured{}
	for _, u := range helmTemplate(t, chart, "-f", values) {
		objs[objectKey(u)] = u
	}
	deployment := func(name string) *appsv1.Deployment {
		u := objs["Deployment "+SystemNamespace+"/"+name]
		if u == nil {
			t.Fatalf("no Deployment %s", name)
		}
		d := &appsv1.Deployment{}
		asTyped(t, u, d)
		return d
	}
	controller, webhook := deployment(ControllerName), deployment(WebhookName)
	cp, wp := controller.Spec.Template.Spec, webhook.Spec.Template.Spec
	cc, wc := cp.Containers[0], wp.Containers[0]

	check := func(what string, got, want any) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("controller replicas", *controller.Spec.Replicas, int32(3))
	check("webhook replicas", *webhook.Spec.Replicas, int32(1))
	check("controller image", cc.Image, "registry.example/team/jobset-controller:v9.9.9@sha256:"+digestA)
	check("webhook image", wc.Image, "mirror.example/jobset-webhook:v9.9.9")
	check("pull policy", string(cc.ImagePullPolicy), "Always")
	check("pull secrets", cp.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "regcred"}})
	check("controller resources", cc.Resources.Limits.Memory().String(), "2Gi")
	check("controller node selector", cp.NodeSelector, map[string]string{"node-role.kubernetes.io/control-plane": ""})
	check("controller affinity", cp.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values, []string{"system"})
	check("controller tolerations", cp.Tolerations, []corev1.Toleration{{Key: "dedicated", Operator: "Equal", Value: "system", Effect: "NoSchedule"}})
	check("controller spread", len(cp.TopologySpreadConstraints), 0)
	check("webhook spread (default)", len(wp.TopologySpreadConstraints), 2)
	check("priority classes", []string{cp.PriorityClassName, wp.PriorityClassName}, []string{"system-cluster-critical", "system-cluster-critical"})

	for _, want := range []string{
		"--leader-elect=true", "--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s",
		"--leader-election-namespace=elsewhere", "--kube-api-qps=1000.5", "--kube-api-burst=2000000", "--concurrency=20",
		"--node-loss-threshold=2m", "--repeated-failure-limit=0", "--zap-log-level=2",
		"--feature-gates=RestartJob=true", "--tls-min-version=VersionTLS13",
	} {
		if !slices.Contains(cc.Args, want) {
			t.Errorf("controller args %q lack %q", cc.Args, want)
		}
	}
	if last := cc.Args[len(cc.Args)-1]; last != "--zap-devel=true" {
		t.Errorf("controller's last arg is %q, want the extra --zap-devel=true", last)
	}
	for _, want := range []string{
		"--agent-image=registry.example/team/jobset-agent:v9.9.9@sha256:" + digestB, "--agent-cpu=200m", "--agent-memory=64Mi",
		"--agent-restart-exit-code=99", "--agent-fence-node-lease=false", "--cert-validity=720h", "--extra-dns-names=webhook.example", "--cert-manager=true",
		"--feature-gates=RestartJob=true", "--tls-min-version=VersionTLS13",
	} {
		if !slices.Contains(wc.Args, want) {
			t.Errorf("webhook args %q lack %q", wc.Args, want)
		}
	}

	for _, key := range []string{
		"ServiceMonitor " + SystemNamespace + "/jobset", "PrometheusRule " + SystemNamespace + "/jobset",
		"ConfigMap " + SystemNamespace + "/jobset-grafana-dashboard",
		"Certificate " + SystemNamespace + "/" + certificateName, "Issuer " + SystemNamespace + "/jobset-selfsigned",
	} {
		if objs[key] == nil {
			t.Errorf("no %s", key)
		}
	}
	if sm := objs["ServiceMonitor "+SystemNamespace+"/jobset"]; sm != nil && sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v lack release: prometheus", sm.GetLabels())
	}
	if cm := objs["ConfigMap "+SystemNamespace+"/jobset-grafana-dashboard"]; cm != nil {
		want, err := dashboardJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedString(cm.Object, "data", dashboardFile)
		check("dashboard ConfigMap", got, strings.TrimSuffix(string(want), "\n"))
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for key, u := range objs {
			if strings.HasPrefix(key, kind+" ") {
				check(key+" inject-ca-from", u.GetAnnotations()["cert-manager.io/inject-ca-from"], SystemNamespace+"/"+certificateName)
			}
		}
	}
	if plc := objs["PriorityLevelConfiguration /"+AgentsFlowName]; plc != nil {
		shares, _, _ := unstructured.NestedFieldNoCopy(plc.Object, "spec", "limited", "nominalConcurrencyShares")
		limit, _, _ := unstructured.NestedFieldNoCopy(plc.Object, "spec", "limited", "limitResponse", "queuing", "queueLengthLimit")
		check("agents' level sizing", fmt.Sprint(shares, " ", limit), "200 50000")
	} else {
		t.Error("no PriorityLevelConfiguration " + AgentsFlowName)
	}

	// Turned off, the API Priority and Fairness objects are gone.
	for _, u := range helmTemplate(t, chart, "--set", "flowControl.enabled=false") {
		if u.GetKind() == "FlowSchema" || u.GetKind() == "PriorityLevelConfiguration" {
			t.Errorf("flowControl.enabled=false renders %s", objectKey(u))
		}
	}
	// cert-manager with the operator's own issuer: no self-signed Issuer.
	for _, u := range helmTemplate(t, chart, "--set", "certManager.enabled=true", "--set", "certManager.issuerRef.kind=ClusterIssuer", "--set", "certManager.issuerRef.name=corp-ca") {
		if u.GetKind() == "Issuer" {
			t.Errorf("an issuerRef given, the chart still renders %s", objectKey(u))
		}
		if u.GetKind() == "Certificate" {
			ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "issuerRef")
			check("issuerRef", ref, map[string]string{"kind": "ClusterIssuer", "name": "corp-ca"})
		}
	}
}

// A value of the wrong type or a misspelt one is refused before anything
// renders, with a message that names it.
func TestChartRefusesBadValues(t *testing.T) {
	chart := testChart(t)
	for _, c := range []struct{ set, wantInError string }{
		{"controller.replicas=two", "replicas"},
		{"controller.nodeLossThreshold=30 seconds", "nodeLossThreshold"},
		{"controller.replica=3", "replica"},
		{"controller.image.digest=latest", "digest"},
	} {
		_, err := helmCmd(t, "template", "jobset", chart, "--set", c.set)
		if err == nil || !strings.Contains(err.Error(), c.wantInError) {
			t.Errorf("--set %s: %v, want an error naming %s", c.set, err, c.wantInError)
		}
	}
}
