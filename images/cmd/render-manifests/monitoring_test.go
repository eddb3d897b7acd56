package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// The checked-in ServiceMonitor selects the two metrics Services of
// install.yaml and no other Service, by a port they have, and each Service
// reaches the container port the binary serves its metrics on: a scrape
// configuration that matches nothing fails silently in Prometheus.
func TestServiceMonitorScrapesBothMetricsEndpoints(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	monitors, err := manifest.Read(filepath.Join(root, "monitoring", "servicemonitor.yaml"))
	if err != nil || len(monitors) != 1 {
		t.Fatalf("monitoring/servicemonitor.yaml: %d objects, %v; want one ServiceMonitor", len(monitors), err)
	}
	sm := monitors[0]
	matchLabels, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(matchLabels) == 0 || len(endpoints) != 1 {
		t.Fatalf("ServiceMonitor: selector %v and %d endpoints, want a selector and one endpoint", matchLabels, len(endpoints))
	}
	port, _, _ := unstructured.NestedString(endpoints[0].(map[string]any), "port")

	var selected []string
	deployments := map[string]*appsv1.Deployment{}
	var services []*corev1.Service
	for _, obj := range generateInstall(t, images{Controller: "c", Webhook: "w", Agent: "a"}) {
		u := obj.(*unstructured.Unstructured)
		switch u.GetKind() {
		case "Service":
			s := &corev1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
				t.Fatal(err)
			}
			services = append(services, s)
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
				t.Fatal(err)
			}
			deployments[d.Name] = d
		}
	}
	for _, s := range services {
		if s.Namespace != sm.GetNamespace() || !labels.SelectorFromSet(matchLabels).Matches(labels.Set(s.Labels)) {
			continue
		}
		selected = append(selected, s.Name)
		var servicePort *corev1.ServicePort
		for i := range s.Spec.Ports {
			if s.Spec.Ports[i].Name == port {
				servicePort = &s.Spec.Ports[i]
			}
		}
		if servicePort == nil {
			t.Errorf("Service %s has no port %q, which the ServiceMonitor scrapes", s.Name, port)
			continue
		}
		d := deployments[strings.TrimSuffix(s.Name, "-metrics")]
		if d == nil || !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("Service %s selects no Deployment's Pods", s.Name)
			continue
		}
		c := d.Spec.Template.Spec.Containers[0]
		var containerPort int32
		for _, p := range c.Ports {
			if p.Name == servicePort.TargetPort.StrVal {
				containerPort = p.ContainerPort
			}
		}
		if want := "--metrics-bind-address=:" + strconv.Itoa(int(containerPort)); containerPort == 0 || !slices.Contains(c.Args, want) {
			t.Errorf("Service %s targets port %q of %s, which is not where it serves metrics (%v)", s.Name, servicePort.TargetPort.String(), d.Name, c.Args)
		}
	}
	slices.Sort(selected)
	if want := []string{MetricsServiceName(ControllerName), MetricsServiceName(WebhookName)}; !slices.Equal(selected, want) {
		t.Errorf("the ServiceMonitor selects the Services %v of install.yaml, want %v", selected, want)
	}
}
